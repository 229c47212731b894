import type { SuppressionReason } from '@mailer/contracts'
import type { RecipientStatus } from '@mailer/email-core'

/** What a dispatcher holds after claiming an email: the row, its content and its recipients. */
export interface ClaimedEmail {
  id: string
  /** X-Request-Id of the request that accepted it (null: accepted before it was stored). */
  requestId: string | null
  projectId: string
  mode: string
  from: string
  replyTo: string[]
  to: string[]
  cc: string[]
  bcc: string[]
  subject: string
  tags: Record<string, string>
  trackOpens: boolean
  trackClicks: boolean
  /** Attempts so far, the one just claimed included. */
  attempts: number
  /** Fencing token: the outcome is written only while the claim is still ours. */
  claimedAt: Date
  sentAt: Date | null
  createdAt: Date
  /** When it was due: accepted, or its scheduled time if later (the base of delivery times). */
  dueAt: Date
  /** Null when the content row is gone (retention purge). */
  content: EmailContent | null
  recipients: ClaimedRecipient[]
}

export interface ClaimedRecipient {
  address: string
  kind: string
  status: RecipientStatus
  /**
   * Its stored reply when it is already `failed` (refused as a message on an earlier attempt),
   * else null: the message of the email's `email.failed` if the email ends failed later.
   */
  smtpResponse: string | null
  /**
   * The reason the address is on the suppression list (`hard_bounce`, `complaint`, `manual`) as
   * the claim read it, else null. A recipient still waiting whose address was listed after the
   * email was accepted is not sent to (planOutcome: `rejected`).
   */
  suppressed: SuppressionReason | null
}

export interface EmailContent {
  html: string | null
  text: string | null
  /** As stored by the email service: validated custom headers, name → value. */
  headers: unknown
  /** As stored by the email service: `Attachment` objects with base64 content. */
  attachments: unknown
}

/**
 * The status an email goes back to when its claim is given back unused (the dispatcher stopped
 * before the message reached the relay): waiting for an attempt, `deferred` once a recipient was
 * deferred, else `queued`, as the contract derives it. An email `queued` after a platform-limit
 * answer with a recipient deferred earlier shows `deferred` until it is claimed again (at once:
 * its dispatch message is handed back with it).
 */
export const releasedStatus = (email: Pick<ClaimedEmail, 'recipients'>): 'queued' | 'deferred' =>
  email.recipients.some((r) => r.status === 'deferred') ? 'deferred' : 'queued'
