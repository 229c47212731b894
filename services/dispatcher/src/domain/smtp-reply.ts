/**
 * What the relay said about one recipient, and what that means for it. Pure: the rules are
 * documented in docs/api.md ("Delivery") and pinned by smtp-reply.test.ts.
 */
import { truncate } from '@mailer/contracts'

/**
 * Where in the SMTP dialogue the answer came from:
 * - `rcpt`: RCPT TO, about this recipient alone;
 * - `message`: MAIL FROM or the end of DATA, about the whole message;
 * - `connection`: connecting, greeting, TLS, AUTH, a dropped connection, a time-out, or the
 *   circuit breaker refusing to try: about the relay, not the message (`code` null when the
 *   relay gave no answer at all).
 */
export type ReplyStage = 'rcpt' | 'message' | 'connection'

export interface RecipientReply {
  address: string
  stage: ReplyStage
  code: number | null
  text: string
}

export type Verdict =
  /** 2xx at the end of DATA: the relay took responsibility for the message. */
  | 'delivered'
  /** 5xx to RCPT TO: the address does not exist or refuses mail (a hard bounce). */
  | 'bounced'
  /**
   * 5xx to MAIL FROM or DATA: the relay refuses the message itself; retrying will not help. Also
   * a `5.6.7` to RCPT TO: the relay cannot take that (non-ASCII) address, which is not its fault.
   */
  | 'message_rejected'
  /** The relay's sending quota or rate is used up (the "platform daily limit"). */
  | 'platform_limit'
  /** Anything else: 4xx, no answer, a dropped connection, the breaker open. */
  | 'transient'

/** RFC 3463 enhanced status code at the start of the text, e.g. `4.7.1` in `451 4.7.1 Slow down`. */
export function enhancedStatus(text: string): string | null {
  const m = /^\d{3}[ -]([245]\.\d{1,3}\.\d{1,3})\b/.exec(text.trim())
  return m ? m[1]! : null
}

const QUOTA_WORDS =
  /\b(quota|limit(s|ed)?|rate|rate[- ]?limit\w*|throttl\w*|too many (messages|e?mails|connections)|credits?|(this|per) (hour|day))\b/i
/**
 * The words of QUOTA_WORDS that make a limit one of the sending rate over time, never of one
 * message's recipients: SendGrid's `452 Too many recipients received this hour (throttled)`.
 */
const SENDING_RATE = /\b(quota|rate|rate[- ]?limit\w*|throttl\w*|credits?|(this|per) (hour|day))\b/i
const MAILBOX_FULL = /mailbox (is )?full|over quota|insufficient storage/i

/**
 * The relay telling us to slow down for a long time, not that a recipient is unhappy:
 * - a 4xx whose text mentions a quota, limit, rate, throttling, credits, a count per (or this)
 *   hour or day, or too many messages/connections (e.g. `451 4.7.1 Daily sending quota exceeded`,
 *   `421 4.7.0 Rate limit hit`, SendGrid's `451 Authentication failed: Maximum credits exceeded`);
 * - or a `5.4.5` answer that mentions a quota or limit (Gmail-style `550 5.4.5 Daily user
 *   sending limit exceeded`), which is a sender quota, not a bounce;
 * - but never a full recipient mailbox (enhanced status `x.2.2`, or text saying so): that is the
 *   recipient's quota, an ordinary soft failure of that recipient.
 */
export function isPlatformLimit(code: number | null, text: string): boolean {
  if (code === null || !QUOTA_WORDS.test(text)) return false
  const enhanced = enhancedStatus(text)
  if (enhanced?.endsWith('.2.2') || MAILBOX_FULL.test(text)) return false
  if (code >= 400 && code < 500) return true
  return code >= 500 && code < 600 && enhanced === '5.4.5'
}

const TOO_MANY_RECIPIENTS = /too many recipients|recipients? (count|limit)/i

/**
 * A RCPT TO refused because the message already has as many recipients as the relay takes in one
 * transaction: the address is fine and goes in a later attempt. Relays still answer 552 for it,
 * which RFC 5321 4.5.3.1.10 tells clients to treat as temporary, and its text ("Recipient limit
 * exceeded") is no sending quota. Said in words, or as enhanced status `x.5.3` (RFC 3463), unless
 * the text is about a sending rate (`452 4.5.3 Throttled: too many messages`, `452 Too many
 * recipients received this hour (throttled)`): classify() checks that first.
 */
function tooManyRecipients(stage: ReplyStage, code: number | null, text: string): 'words' | 'status' | null {
  if (stage !== 'rcpt' || code === null || code < 400 || code >= 600) return null
  if (TOO_MANY_RECIPIENTS.test(text)) return 'words'
  return /^[45]\.5\.3$/.test(enhancedStatus(text) ?? '') ? 'status' : null
}

/**
 * A RCPT TO refused because the relay will not relay for us (no or wrong credentials, our address
 * not allowed: Postfix's `554 5.7.1 <x@y>: Relay access denied`, `530 5.7.0 Authentication
 * required`), or refuses our sender, host or HELO there: Postfix checks its sender, client and
 * HELO restrictions at RCPT TO (smtpd_delay_reject), so a sender the relay login may not use is
 * `553 5.7.1 <a@b>: Sender address rejected: not owned by user …` for each recipient. Said about
 * every recipient, it is our configuration, not theirs: as a bounce it would suppress every
 * address the deployment sends to until an operator noticed.
 */
const RELAY_REFUSED =
  /\brelay(ing)? (access )?(denied|not (permitted|allowed))|\b(not permitted|unable) to relay\b|\bauthentication (is )?required\b|\b(sender address|client host|helo command) rejected\b/i

export function classify(reply: Pick<RecipientReply, 'stage' | 'code' | 'text'>): Verdict {
  const { stage, code, text } = reply
  if (code !== null && code >= 200 && code < 300 && stage !== 'connection') return 'delivered'
  const recipients = tooManyRecipients(stage, code, text)
  // "Too many recipients" with a time span or a throttle is the sending quota (SendGrid's hourly
  // recipient limit): as this message's recipient count it was retried on the short backoff.
  if (recipients === 'words' && !SENDING_RATE.test(text)) return 'transient'
  if (isPlatformLimit(code, text)) return 'platform_limit'
  if (recipients) return 'transient'
  // Said at MAIL FROM it is the same refusal, for every message (Gmail's and Office 365's
  // `530 5.7.0 Authentication Required` when the login is missing, `Must issue a STARTTLS command
  // first` when TLS was turned off): as `message_rejected` it failed all mail for good until an
  // operator fixed the relay settings. A 530 is by definition that (RFC 4954, RFC 3207).
  if ((stage === 'rcpt' || stage === 'message') && (code === 530 || RELAY_REFUSED.test(text)))
    return 'transient'
  // Non-ASCII address without SMTPUTF8 on the way (RFC 6531): the relay's limit, not a bad address.
  if (stage === 'rcpt' && enhancedStatus(text) === '5.6.7') return 'message_rejected'
  // A 5xx before any message was offered (greeting, AUTH) is a relay or configuration problem
  // that an operator can fix; it must not fail or bounce emails.
  if (code !== null && code >= 500 && code < 600 && stage === 'rcpt') return 'bounced'
  if (code !== null && code >= 500 && code < 600 && stage === 'message') return 'message_rejected'
  return 'transient'
}

/**
 * Replies are stored and shown whole (code and enhanced status included), on one line, bounded.
 * A long one is cut without splitting an emoji (`truncate`): the text goes into events and
 * `last_error` as jsonb, which refuses a lone surrogate, and the outcome could not be recorded.
 */
export function replyText(text: string): string {
  const t = text.replace(/\s+/g, ' ').trim()
  return t.length > 1_000 ? `${truncate(t, 997)}...` : t
}
