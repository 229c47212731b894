import type { ConnectionOptions } from 'node:tls'
import type { SmtpReply } from '../../domain/smtp-transaction.js'

/** How to reach and talk to the relay (from SMTP_URL and the SMTP_* settings). */
export interface SmtpOptions {
  host: string
  port: number
  /** TLS from the first byte (`smtps://`, port 465); otherwise `starttls` decides. */
  secure: boolean
  /**
   * On a plain connection: `offered` upgrades whenever the relay offers STARTTLS (the default),
   * and with `auth` refuses a relay that does not (credentials never go in clear; mail without a
   * login still does); `required` refuses such a relay in any case (neither mail nor credentials
   * in clear); `never` stays plain, logging in in clear text (a relay on the same host or pod).
   */
  starttls?: 'offered' | 'required' | 'never'
  auth?: { user: string; pass: string }
  /**
   * Connect, greeting and inactivity time-out, and the longest wait for each whole reply (a relay
   * dripping one line at a time is never inactive) but the final dot's; an idle pooled connection
   * is closed after it.
   */
  timeoutMs: number
  /**
   * The longest wait for the answer to a message's final dot, and the inactivity time-out while
   * waiting for it (RFC 5321 4.5.3.2.6 gives it 10 minutes): a relay may scan or queue the message
   * before it answers, and gone by then we recorded a failure for a message it had taken, and sent
   * it again on every retry.
   */
  dataTimeoutMs: number
  /**
   * Extra TLS settings: a private CA (also possible for the whole process with
   * NODE_EXTRA_CA_CERTS), or `rejectUnauthorized: false` for a relay whose certificate cannot be
   * verified (encrypted, but not authenticated). Verified by default.
   */
  tls?: Pick<ConnectionOptions, 'ca' | 'rejectUnauthorized'>
  /**
   * Aborted when the dispatcher stops: a session that has not yet written a message's final dot
   * ends at once (SendAborted); one waiting for the answer to its dot keeps waiting for it.
   */
  signal?: AbortSignal
}

/**
 * The relay gave no usable answer: refused or dropped connection, time-out, TLS or AUTH failure.
 * `code` is the relay's reply code when it answered (a 421 greeting, a 535 to AUTH), else null.
 * `bodySent`: the message's final dot went out, so the relay may have it. `refused`: the RCPT TO
 * refusals received before the session broke, one entry per envelope recipient (null: none),
 * which stand (rcptRefusals).
 */
export class SmtpConnectionError extends Error {
  constructor(
    message: string,
    readonly code: number | null = null,
    readonly bodySent = false,
    readonly refused: ReadonlyArray<SmtpReply | null> = [],
  ) {
    super(message)
    this.name = 'SmtpConnectionError'
  }
}

/**
 * The send was given up because the dispatcher is stopping, before the message's final dot went
 * out: the relay never had the message (a session closed in the middle of a transaction cancels
 * it, RFC 5321 3.8), so the email can go to another dispatcher as if it had never been tried.
 * Not a relay failure: the breaker does not count it.
 */
export class SendAborted extends SmtpConnectionError {
  constructor(message = 'not sent: the dispatcher is stopping') {
    super(message)
    this.name = 'SendAborted'
  }
}

/**
 * The send was given up just before the message's final dot because the email's claim may no
 * longer be this dispatcher's: not refreshed for too long (the database out of reach, the process
 * paused) or taken by another replica (ClaimKeeper.holds). Another replica may be sending the
 * email, or may once the claim is stale: the dot would have made a second copy. Like SendAborted,
 * the relay never had the message.
 */
export class ClaimNotHeld extends SendAborted {
  constructor() {
    super('not sent: the claim on the email may no longer be ours')
    this.name = 'ClaimNotHeld'
  }
}

/**
 * Asked right before a message's final dot is written, in the same tick as the write: false gives
 * the send up (ClaimNotHeld) with the dot unsent.
 */
export type Fence = () => boolean
