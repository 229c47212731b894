import type { SuppressionReason } from '@mailer/contracts'
import {
  advanceRecipient,
  deriveEmailStatus,
  type EmailStatus,
  isTerminalRecipient,
  type NewEvent,
  type RecipientStatus,
} from '@mailer/email-core'
import { backoffSeconds, type RetryPolicy, retriesLeft } from './backoff.js'
import { classify, type RecipientReply, type Verdict } from './smtp-reply.js'

export interface RecipientState {
  address: string
  status: RecipientStatus
  /**
   * The stored reply of a recipient already `failed` (the claim reads it for those only): the
   * message of `email.failed` when the email ends failed on a later attempt.
   */
  smtpResponse?: string | null
}

export interface AttemptResult {
  provider: 'smtp' | 'file'
  messageId: string
  /** One reply per recipient this attempt was for. */
  replies: RecipientReply[]
}

export interface PlanInput {
  /** Attempts so far, this one included. */
  attempts: number
  /** The relay already accepted this email on an earlier attempt (`email.sent` was recorded). */
  alreadySent: boolean
  /** When the email was due (accepted, or its scheduled time if later): delivery times count from it. */
  dueAt: Date
  recipients: RecipientState[]
  /**
   * Recipients still waiting that were not sent to because their address is on the suppression
   * list now (listed after the email was accepted), with the list's reason. Not in `replies`.
   */
  suppressed?: SuppressedRecipient[]
  result: AttemptResult
  now: Date
  policy: RetryPolicy
  random?: () => number
}

export interface SuppressedRecipient {
  address: string
  reason: SuppressionReason
}

export interface RecipientUpdate {
  address: string
  status: RecipientStatus
  smtpStatus: number | null
  smtpResponse: string | null
  deliveryMs: number | null
  bounceType: string | null
}

/** Per recipient, for `deliveries_total{outcome}`. */
export type Outcome = 'delivered' | 'bounced' | 'deferred' | 'retrying' | 'failed' | 'rejected'

/** Everything one attempt changes, written in one transaction. */
export interface Plan {
  /** When the attempt ended: the time of its events, timestamps and the base of the next attempt. */
  at: Date
  status: EmailStatus
  nextAttemptAt: Date | null
  /** The relay accepted the message for at least one recipient (sets `sent_at` and `delivered_at` once, and `message_id`). */
  sent: boolean
  failed: boolean
  lastError: string | null
  recipients: RecipientUpdate[]
  events: NewEvent[]
  /** Addresses to add to the suppression list as `hard_bounce`. */
  suppress: string[]
  outcomes: Outcome[]
}

/** The largest delivery time recorded (2^31 - 1 ms, about 24.8 days). */
export const MAX_DELIVERY_MS = 2_147_483_647

const needsRetry = (v: Verdict) => v === 'transient' || v === 'platform_limit'

/**
 * Maps the relay's answers to recipient statuses, the email's status, its next attempt and the
 * events to record (contract.md parts 3 and 4). While any recipient waits for a retry the email
 * is `deferred` (or `queued` after a platform-limit answer) so that the email service's due
 * sweeper picks it up; once every recipient is final the status is derived from them.
 */
export function planOutcome(input: PlanInput): Plan {
  const { result, now, policy, attempts } = input
  // Clamped to what `email_recipients.delivery_ms` (int4) holds: a value past it made the outcome
  // write fail, and the email was sent again at every redelivery of its message.
  const elapsedMs = Math.min(MAX_DELIVERY_MS, Math.max(0, Math.round(now.getTime() - input.dueAt.getTime())))
  const judged = result.replies.map((reply) => ({ reply, verdict: classify(reply) }))
  const retrying = judged.filter((j) => needsRetry(j.verdict))
  const canRetry = retrying.length > 0 && retriesLeft(attempts, policy)
  const platformLimit = retrying.find((j) => j.verdict === 'platform_limit')
  const delaySeconds = platformLimit
    ? policy.platformLimitSeconds
    : backoffSeconds(attempts, policy, input.random)

  const current = new Map(input.recipients.map((r) => [r.address, r.status]))
  const recipients: RecipientUpdate[] = []
  const perRecipient: NewEvent[] = []
  const suppress: string[] = []
  const outcomes: Outcome[] = []
  // This attempt's first reply of each kind: the causes `email.failed` and `last_error` name.
  let rejectedMessage: RecipientReply | undefined
  let exhausted: RecipientReply | undefined
  let deferred: RecipientReply | undefined

  // Not sent to: on the suppression list since the email was accepted (the accept refuses a
  // listed address with 422 recipient_suppressed; this is the same rule, applied again when the
  // message goes out). `rejected`, the contract's status for a recipient refused before sending.
  for (const { address, reason } of input.suppressed ?? []) {
    const status = advanceRecipient(current.get(address) ?? 'queued', 'rejected')
    current.set(address, status)
    recipients.push({
      address,
      status,
      smtpStatus: null,
      smtpResponse: null,
      deliveryMs: null,
      bounceType: null,
    })
    perRecipient.push({
      type: 'email.rejected',
      recipient: address,
      extra: {
        delivery: {
          status: 'rejected',
          provider: result.provider,
          deliveryTimeMs: elapsedMs,
          smtpStatusCode: null,
          smtpResponse: null,
        },
        suppression: { reason },
        terminal: true,
      },
    })
    outcomes.push('rejected')
  }
  const firstSuppressed = input.suppressed?.[0]
  // The recipients the email goes (or went) to: analytics counts `sent` as the pairs handed to the
  // relay, so those not sent to because they are listed (now or on an earlier attempt) are left out.
  const recipientCount = input.recipients.filter(
    (r) => (current.get(r.address) ?? r.status) !== 'rejected',
  ).length

  for (const { reply, verdict } of judged) {
    const was = current.get(reply.address) ?? 'queued'
    const delivery = (status: string) => ({
      status,
      provider: result.provider,
      deliveryTimeMs: elapsedMs,
      smtpStatusCode: reply.code,
      smtpResponse: reply.text,
    })
    let next: RecipientStatus = was
    let bounceType: string | null = null
    let deliveryMs: number | null = null
    if (verdict === 'delivered') {
      next = 'delivered'
      deliveryMs = elapsedMs
      perRecipient.push({
        type: 'email.delivered',
        recipient: reply.address,
        extra: { delivery: delivery('delivered'), terminal: true },
      })
      outcomes.push('delivered')
    } else if (verdict === 'bounced') {
      next = 'bounced'
      bounceType = 'hard'
      deliveryMs = elapsedMs
      suppress.push(reply.address)
      perRecipient.push({
        type: 'email.bounced',
        recipient: reply.address,
        // An email whose recipients all bounce gets no `email.sent`: analytics counts its sends
        // from the bounce instead, so it needs the email's recipient count here too.
        extra: {
          delivery: delivery('bounced'),
          bounce: { type: 'hard', reason: reply.text },
          terminal: true,
          recipientCount,
        },
      })
      outcomes.push('bounced')
    } else if (verdict === 'message_rejected' || !canRetry) {
      next = 'failed'
      if (verdict === 'message_rejected') rejectedMessage ??= reply
      else exhausted ??= reply
      outcomes.push('failed')
    } else if (verdict === 'transient') {
      next = 'deferred'
      deferred ??= reply
      perRecipient.push({
        type: 'email.deferred',
        recipient: reply.address,
        extra: { delivery: delivery('deferred'), terminal: false },
      })
      outcomes.push('deferred')
    } else {
      // Platform limit: the recipient keeps its status; the email goes back to `queued`.
      outcomes.push('retrying')
    }
    const status = advanceRecipient(was, next)
    current.set(reply.address, status)
    recipients.push({
      address: reply.address,
      status,
      smtpStatus: reply.code,
      smtpResponse: reply.text,
      deliveryMs,
      bounceType,
    })
  }

  const events: NewEvent[] = []
  const sent = judged.some((j) => j.verdict === 'delivered')
  // `recipientCount` lets analytics rate per-recipient outcomes (delivered, bounced…) against
  // the recipients the email was sent to, not against emails.
  if (sent && !input.alreadySent) {
    events.push({
      type: 'email.sent',
      extra: { messageId: result.messageId, recipientCount },
    })
  }
  events.push(...perRecipient)
  if (platformLimit && canRetry) {
    events.push({
      type: 'email.retrying',
      extra: {
        code: 'platform_limit',
        message: platformLimit.reply.text,
        attempt: attempts,
        delaySeconds,
      },
    })
  }

  const all = input.recipients.map((r) => current.get(r.address) ?? r.status)
  const status: EmailStatus = canRetry ? (platformLimit ? 'queued' : 'deferred') : deriveEmailStatus(all)
  // A recipient already failed while the email was still being tried was refused as a message:
  // running out of retries, or an unsendable email, fails every recipient still waiting at once
  // and the email ends with them.
  const earlier = input.recipients.find((r) => r.status === 'failed')
  const failure = {
    code: rejectedMessage || earlier ? 'message_rejected' : 'retries_exhausted',
    // The reply of the recipient whose failure the code names (this attempt's refusal first),
    // never a bounce's or a delivery's: the email did not fail because of those.
    message: rejectedMessage?.text ?? earlier?.smtpResponse ?? exhausted?.text ?? 'delivery failed',
  }
  // Once, when the email ends failed (interface.md: "email ended as failed"): not for a
  // recipient failing while others still wait, nor for an email that ends bounced.
  if (status === 'failed') events.push({ type: 'email.failed', extra: failure })
  // What an operator reading `last_error` looks for: why the email failed, or why it still waits
  // (the quota answer of an email queued by the platform limit, else a deferral's reply). A
  // bounce or a delivery is an outcome, not an error; null keeps the stored one (record.ts).
  const waiting = platformLimit && canRetry ? platformLimit.reply : deferred
  // An email that ends `rejected` on a later attempt (a listed recipient was rejected while another
  // was still deferred) says so instead of keeping the deferral's reply, now answered.
  const rejectedEarlier =
    status === 'rejected' ? input.recipients.find((r) => r.status === 'rejected') : undefined
  const lastError =
    status === 'failed'
      ? failure.message
      : ((waiting ?? rejectedMessage ?? exhausted)?.text ??
        (firstSuppressed
          ? `Not sent to ${firstSuppressed.address}: on the suppression list (${firstSuppressed.reason})`
          : rejectedEarlier
            ? `Not sent to ${rejectedEarlier.address}: rejected (its email.rejected says why)`
            : null))
  return {
    at: now,
    status,
    nextAttemptAt: canRetry ? new Date(now.getTime() + Math.round(delaySeconds * 1000)) : null,
    sent,
    failed: status === 'failed',
    lastError,
    recipients,
    events,
    suppress,
    outcomes,
  }
}

/**
 * The email cannot be sent at all (its content expired, or it cannot be rendered): every
 * recipient still on its way fails, and the email gets `email.failed` with `code` when that
 * makes it end `failed` (as planOutcome: one that ends `bounced` gets none).
 */
export function planUnsendable(recipients: RecipientState[], code: string, message: string, now: Date): Plan {
  const updates: RecipientUpdate[] = recipients
    .filter((r) => !isTerminalRecipient(r.status))
    .map((r) => ({
      address: r.address,
      status: 'failed',
      smtpStatus: null,
      smtpResponse: null,
      deliveryMs: null,
      bounceType: null,
    }))
  const failedSet = new Set(updates.map((u) => u.address))
  const all = recipients.map((r) => (failedSet.has(r.address) ? 'failed' : r.status))
  const status = deriveEmailStatus(all)
  return {
    at: now,
    status,
    nextAttemptAt: null,
    sent: false,
    failed: status === 'failed',
    lastError: updates.length ? message : null,
    recipients: updates,
    events: updates.length && status === 'failed' ? [{ type: 'email.failed', extra: { code, message } }] : [],
    suppress: [],
    outcomes: updates.map(() => 'failed'),
  }
}
