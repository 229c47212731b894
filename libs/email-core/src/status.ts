import { EMAIL_STATUS_VALUES } from '@mailer/contracts'

/**
 * Email and recipient statuses (contract.md part 3). A recipient's status never moves down the
 * ranking; the email's status is derived from its recipients.
 */
/** The contract's status list (libs/contracts is the catalog). */
export const EMAIL_STATUSES = EMAIL_STATUS_VALUES
export type EmailStatus = (typeof EMAIL_STATUSES)[number]

export type RecipientStatus =
  | 'queued'
  | 'sent'
  | 'deferred'
  | 'delivered'
  | 'failed'
  | 'rejected'
  | 'bounced'
  | 'complained'
  /** Its email was canceled before it left (every recipient of that email, never another). */
  | 'canceled'
  /** Its email was sent with a test key: stored, never relayed (every recipient of that email). */
  | 'test'

const RANK: Record<RecipientStatus, number> = {
  queued: 0,
  sent: 0,
  deferred: 1,
  delivered: 2,
  failed: 3,
  rejected: 3,
  bounced: 4,
  complained: 5,
  // Outside the contract's ranking: never sent, so no answer can follow it (a canceled email is
  // never claimed again); above every other status, so nothing moves it.
  canceled: 6,
  // Where `queued` is: the dev route's fakes still move a test email's recipient (its email stays
  // `test`), as they moved it from `queued` before test recipients had a status of their own.
  test: 0,
}

/** The recipient's next status: `next` unless that would move it down the ranking. */
export function advanceRecipient(current: RecipientStatus, next: RecipientStatus): RecipientStatus {
  return RANK[next] >= RANK[current] ? next : current
}

/** Final for a recipient: nothing more will be attempted (a test email is never attempted). */
export const isTerminalRecipient = (s: RecipientStatus): boolean => s === 'test' || RANK[s] >= 2

/**
 * any canceled → canceled (the whole email was), any test → test (a test email's status is never
 * derived, it stays `test`; this keeps a derivation from saying otherwise), else any complained →
 * complained, else any bounced → bounced, any rejected → rejected, any failed → failed, all
 * delivered → delivered, any deferred → deferred, otherwise (some delivered, some still on their
 * way) → sent; all still queued → queued.
 */
export function deriveEmailStatus(recipients: RecipientStatus[]): EmailStatus {
  const has = (s: RecipientStatus) => recipients.includes(s)
  if (has('canceled')) return 'canceled'
  if (has('test')) return 'test'
  if (has('complained')) return 'complained'
  if (has('bounced')) return 'bounced'
  if (has('rejected')) return 'rejected'
  if (has('failed')) return 'failed'
  if (recipients.length > 0 && recipients.every((r) => r === 'delivered')) return 'delivered'
  if (has('deferred')) return 'deferred'
  if (recipients.every((r) => r === 'queued')) return 'queued'
  return 'sent'
}

/** Cancelable: scheduled, or queued and not yet claimed by a dispatcher. */
export const isCancelable = (s: string): boolean => s === 'scheduled' || s === 'queued'
