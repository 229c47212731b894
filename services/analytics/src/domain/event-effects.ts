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
  /** The sends a bounce also counts: usually already counted, which is no duplicate event. */
  derived?: true
}

export type Classified =
  | { kind: 'counted'; effects: Effect[] }
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

const tagsOf = (data: EventMessage['event']['data']): Dimension[] =>
  Object.entries(data.tags).map(([k, v]) => ({ kind: 'tag' as const, value: clean(`${k}:${v}`) }))

/**
 * The sends of an email: one key per email (`email.sent` is one event per email, whatever
 * recipient a dev-route event names), counting its recipients, with its tags.
 */
function sendsOf(projectId: string, data: EventMessage['event']['data'], at: Date): Effect {
  return {
    projectId,
    key: `email.sent|${data.emailId}|*`.replaceAll('\u0000', ''),
    at,
    counter: 'sent',
    amount: recipientCountOf(data),
    deliveryMs: null,
    dimensions: tagsOf(data),
  }
}

/**
 * Decides what an (already schema-valid) event message does to the aggregates. A bounce also
 * counts its email's sends: the relay answered for those recipients, but an email whose
 * recipients all bounced never gets `email.sent` (that needs one accepted), and without its
 * sends a project's bounce rate would leave out exactly the emails that bounced. Both share the
 * send key, so an email with `email.sent` and bounces counts its sends once, whichever comes first.
 */
export function classify(msg: EventMessage): Classified {
  const { event, projectId } = msg
  const counter = COUNTER_BY_TYPE[event.type]
  // The synthetic webhook test event is never real traffic.
  if (!counter || event.data.test === true) return { kind: 'ignored' }
  const at = new Date(event.createdAt)
  if (Number.isNaN(at.getTime())) return { kind: 'invalid', reason: 'createdAt is not a date' }
  const year = at.getUTCFullYear()
  if (year < 2000 || year > 9999) return { kind: 'invalid', reason: 'createdAt is out of range' }
  if (counter === 'sent') return { kind: 'counted', effects: [sendsOf(projectId, event.data, at)] }

  const recipient = event.data.recipient
  const key = (
    EVERY_EVENT_COUNTS.has(event.type) ? event.id : `${event.type}|${event.data.emailId}|${recipient ?? '*'}`
  ).replaceAll('\u0000', '')
  const dimensions: Dimension[] = []
  const domain = counter === 'bounced' ? domainOf(recipient) : null
  if (domain) dimensions.push({ kind: 'bounced_domain', value: domain })
  const effect: Effect = {
    projectId,
    key,
    at,
    counter,
    amount: 1,
    deliveryMs: counter === 'delivered' ? deliveryMsOf(event.data) : null,
    dimensions,
  }
  if (counter !== 'bounced') return { kind: 'counted', effects: [effect] }
  return { kind: 'counted', effects: [{ ...sendsOf(projectId, event.data, at), derived: true }, effect] }
}

/**
 * `email.sent` is one event per email; it counts as many sends as the email had recipients
 * (`recipientCount`, also on bounces), so that per-recipient outcomes divided by `sent` stay rates.
 */
function recipientCountOf(data: Record<string, unknown>): number {
  const n = data.recipientCount
  return typeof n === 'number' && Number.isInteger(n) && n > 0 && n <= 1000 ? n : 1
}
