import type { AnalyticsCounter, EventMessage } from '@mailer/contracts'
import { isRecordable } from './histogram.js'

/** Event type → the counter it increments. Other types (queued, retrying, …) count nothing. */
export const COUNTER_BY_TYPE: Readonly<Record<string, AnalyticsCounter>> = {
  'email.sent': 'sent',
  'email.delivered': 'delivered',
  'email.deferred': 'deferred',
  'email.bounced': 'bounced',
  'email.complained': 'complained',
  'email.rejected': 'rejected',
  'email.failed': 'failed',
  'email.opened': 'opened',
  'email.clicked': 'clicked',
}

/**
 * Types counted once per (email, recipient) whatever how many events say so: a recipient is sent
 * once, deferred (at least once), delivered once... Clicks count every click.
 */
const EVERY_EVENT_COUNTS: ReadonlySet<string> = new Set(['email.clicked'])

export type DimensionKind = 'tag' | 'bounced_domain'
export const MAX_DIMENSION_VALUE = 512

/** PostgreSQL text cannot hold NUL; values are also capped in length. */
export const clean = (s: string): string => s.replaceAll('\u0000', '').slice(0, MAX_DIMENSION_VALUE)

export interface Dimension {
  kind: DimensionKind
  value: string
}

/** What one event does to the aggregates. */
export interface Effect {
  projectId: string
  /**
   * Idempotency key written to `analytics_processed_events`: `<type>|<emailId>|<recipient or *>`
   * for once-per-recipient types, the event id for clicks. A redelivered event (same id) and a
   * second event for the same outcome of the same recipient both map to an existing key.
   */
  key: string
  at: Date
  counter: AnalyticsCounter
  /** How much `counter` grows: recipients for `email.sent`, else 1. */
  amount: number
  /** `email.delivered`: `data.delivery.deliveryTimeMs`, when present and sane. */
  deliveryMs: number | null
  /** Per-day dimensions: `tag` (`key:value`, on sent) and `bounced_domain` (on bounced). */
  dimensions: Dimension[]
}

export type Classified =
  | { kind: 'counted'; effect: Effect }
  | { kind: 'ignored' }
  | { kind: 'invalid'; reason: string }

/** The domain of an address, lower-cased (`null` when there is none). */
export function domainOf(address: string | null): string | null {
  if (!address) return null
  const at = address.lastIndexOf('@')
  if (at < 0) return null
  const domain = address
    .slice(at + 1)
    .replace(/>\s*$/, '')
    .trim()
    .toLowerCase()
  return domain.length > 0 ? clean(domain) : null
}

function deliveryMsOf(data: Record<string, unknown>): number | null {
  const delivery = data.delivery as { deliveryTimeMs?: unknown } | undefined
  const ms = delivery?.deliveryTimeMs
  return isRecordable(ms) ? ms : null
}

/** Decides what an (already schema-valid) event message does to the aggregates. */
export function classify(msg: EventMessage): Classified {
  const { event, projectId } = msg
  const counter = COUNTER_BY_TYPE[event.type]
  // The synthetic webhook test event is never real traffic.
  if (!counter || event.data.test === true) return { kind: 'ignored' }
  const at = new Date(event.createdAt)
  if (Number.isNaN(at.getTime())) return { kind: 'invalid', reason: 'createdAt is not a date' }
  const year = at.getUTCFullYear()
  if (year < 2000 || year > 9999) return { kind: 'invalid', reason: 'createdAt is out of range' }
  const recipient = event.data.recipient
  const key = (
    EVERY_EVENT_COUNTS.has(event.type) ? event.id : `${event.type}|${event.data.emailId}|${recipient ?? '*'}`
  ).replaceAll('\u0000', '')

  const dimensions: Dimension[] = []
  if (counter === 'sent') {
    for (const [k, v] of Object.entries(event.data.tags)) {
      dimensions.push({ kind: 'tag', value: clean(`${k}:${v}`) })
    }
  } else if (counter === 'bounced') {
    const domain = domainOf(recipient)
    if (domain) dimensions.push({ kind: 'bounced_domain', value: domain })
  }
  return {
    kind: 'counted',
    effect: {
      projectId,
      key,
      at,
      counter,
      amount: counter === 'sent' ? recipientCountOf(event.data) : 1,
      deliveryMs: counter === 'delivered' ? deliveryMsOf(event.data) : null,
      dimensions,
    },
  }
}

/**
 * `email.sent` is one event per email; it counts as many sends as the email had recipients
 * (`recipientCount`), so that per-recipient outcomes divided by `sent` stay rates.
 */
function recipientCountOf(data: Record<string, unknown>): number {
  const n = data.recipientCount
  return typeof n === 'number' && Number.isInteger(n) && n > 0 && n <= 1000 ? n : 1
}
