import { type DevEventType, fail, type SuppressionReason } from '@mailer/contracts'
import {
  advanceRecipient,
  deriveEmailStatus,
  type EmailStatus,
  isTerminalRecipient,
  type NewEvent,
  type RecipientStatus,
} from '@mailer/email-core'

// Statuses the due sweeper and the dispatcher still act on (the dispatcher claims queued and
// deferred emails, the sweeper queues scheduled ones): moving such an email to a derived status
// while a recipient still waits would leave that recipient unsent for good.
const IN_PROGRESS = new Set(['scheduled', 'queued', 'deferred', 'sending'])

export interface DevEmail {
  id: string
  mode: string
  status: string
  to: string[]
  createdAt: Date
  scheduledAt?: Date | null
  recipients: Array<{ address: string; status: string }>
}

export interface RecipientChange {
  address: string
  status: RecipientStatus
  smtpStatus: number | null
  smtpResponse: string | null
  bounceType: string | null
  /** Kept on the recipient for delivered and bounced, as the dispatcher does. */
  deliveryMs: number | null
}

/**
 * Types the dispatcher records for the whole email (`data.recipient: null`, interface.md part 2):
 * one `email.sent` per email, one `email.failed` whichever recipients failed. A fake names the
 * recipient whose status it moves, but its event has the shape a receiver will get for real.
 */
const WHOLE_EMAIL_TYPES: ReadonlySet<DevEventType> = new Set(['email.sent', 'email.failed'])

// What `email_recipients.delivery_ms` (int4) holds, as the dispatcher clamps it (about 24.8 days).
const MAX_DELIVERY_MS = 2_147_483_647

/** What one faked event changes, written in one transaction. */
export interface DevEventPlan {
  event: NewEvent
  /** The recipient's new state, or null when the ranking kept its status. */
  recipient: RecipientChange | null
  /** The email's new status, or null when it stays as it is. */
  emailStatus: EmailStatus | null
  /** Add (or upgrade) the recipient on the suppression list. */
  suppress: SuppressionReason | null
}

interface Outcome {
  status: RecipientStatus
  smtp: [number, string] | null
  terminal: boolean
}

// What the dispatcher would have recorded for each outcome, with a relay reply that says it is fake.
const OUTCOMES: Record<DevEventType, Outcome> = {
  'email.sent': { status: 'sent', smtp: null, terminal: false },
  'email.delivered': {
    status: 'delivered',
    smtp: [250, '250 2.0.0 OK (faked by the dev route)'],
    terminal: true,
  },
  'email.deferred': {
    status: 'deferred',
    smtp: [451, '451 4.3.0 Try again later (faked by the dev route)'],
    terminal: false,
  },
  'email.bounced': {
    status: 'bounced',
    smtp: [550, '550 5.1.1 No such user (faked by the dev route)'],
    terminal: true,
  },
  'email.complained': { status: 'complained', smtp: null, terminal: true },
  'email.rejected': {
    status: 'rejected',
    smtp: [554, '554 5.7.1 Rejected (faked by the dev route)'],
    terminal: true,
  },
  'email.failed': { status: 'failed', smtp: null, terminal: true },
}

/**
 * Plans a fake event for one recipient of an email (the first `to` address when none is named):
 * the event as the dispatcher would record it (marked `dev: true`), the recipient's status moved
 * only up the ranking, the email's status derived again (a test email stays `test`, a canceled
 * one `canceled` with its recipients as they were, one still in progress keeps its status until
 * every recipient is final), and the suppression a hard bounce or a complaint adds. 400
 * `invalid_body` when `recipient` is not one of the email's recipients.
 */
export function planDevEvent(
  email: DevEmail,
  type: DevEventType,
  recipient: string | undefined,
  now: Date,
): DevEventPlan {
  const address = recipient ?? email.to[0] ?? email.recipients[0]?.address
  const current = email.recipients.find((r) => r.address === address)
  if (!address || !current)
    throw fail('invalid_body', `'${address ?? ''}' is not a recipient of ${email.id}`, 'recipient')

  const o = OUTCOMES[type]
  const status = advanceRecipient(current.status as RecipientStatus, o.status)
  // From the time the email was due (its scheduled time, if later), as the dispatcher measures it.
  const due = Math.max(email.createdAt.getTime(), email.scheduledAt?.getTime() ?? 0)
  const deliveryTimeMs = Math.min(MAX_DELIVERY_MS, Math.max(0, now.getTime() - due))
  const delivery = {
    status: o.status,
    provider: 'dev',
    deliveryTimeMs,
    smtpStatusCode: o.smtp?.[0] ?? null,
    smtpResponse: o.smtp?.[1] ?? null,
  }

  // `recipientCount` where the dispatcher puts it (sent, bounced): analytics counts sends by it.
  const recipientCount = email.recipients.length
  let extra: Record<string, unknown>
  if (type === 'email.sent') extra = { messageId: `<${email.id}.dev@mailer.invalid>`, recipientCount }
  else if (type === 'email.failed')
    extra = { code: 'dev_event', message: 'Failure faked by POST /v1/admin/dev/events' }
  else {
    extra = { delivery, terminal: o.terminal }
    if (type === 'email.bounced') {
      extra.bounce = { type: 'hard', reason: o.smtp?.[1] }
      extra.recipientCount = recipientCount
    }
    if (type === 'email.complained') extra.complaint = { type: 'abuse' }
  }

  const all = email.recipients.map((r) => (r.address === address ? status : (r.status as RecipientStatus)))
  // A canceled email never left: the fake goes on the timeline only.
  const changed = status !== current.status && email.status !== 'canceled'
  const waiting = IN_PROGRESS.has(email.status) && !all.every(isTerminalRecipient)
  return {
    event: {
      type,
      recipient: WHOLE_EMAIL_TYPES.has(type) ? null : address,
      at: now,
      extra: { ...extra, dev: true },
    },
    recipient: changed
      ? {
          address,
          status,
          smtpStatus: o.smtp?.[0] ?? null,
          smtpResponse: o.smtp?.[1] ?? null,
          bounceType: type === 'email.bounced' ? 'hard' : null,
          deliveryMs: type === 'email.delivered' || type === 'email.bounced' ? deliveryTimeMs : null,
        }
      : null,
    emailStatus: changed && email.mode === 'live' && !waiting ? deriveEmailStatus(all) : null,
    suppress: type === 'email.bounced' ? 'hard_bounce' : type === 'email.complained' ? 'complaint' : null,
  }
}
