import { asciiDomain } from '@mailer/contracts'
import { type RecipientReply, replyText } from './smtp-reply.js'

/** One reply of the relay: its code and its text, every line of a multi-line reply joined by \n. */
export interface SmtpReply {
  code: number
  text: string
}

/** What the relay answered to one message's commands, in order. */
export interface SmtpTransaction {
  mail: SmtpReply
  /** One per envelope recipient, in envelope order; empty when MAIL FROM was refused (unpipelined). */
  rcpt: SmtpReply[]
  /** The answer to DATA; null when it was not sent (MAIL FROM refused, or no recipient taken). */
  data: SmtpReply | null
  /** The answer after the message's final dot; null when the message was not sent. */
  final: SmtpReply | null
}

export const positive = (r: SmtpReply | null | undefined): boolean => !!r && r.code >= 200 && r.code < 300

/** A 421 among the answers of a transaction: the relay is closing the session. */
export const closingReply = (t: SmtpTransaction): SmtpReply | undefined =>
  [t.mail, ...t.rcpt, t.data, t.final].find((r): r is SmtpReply => r?.code === 421)

/**
 * What stands of a transaction cut short (a 421, a hang-up, a time-out), one entry per envelope
 * recipient (`count` of them): a refused RCPT TO is that recipient's answer for good (a 5xx its
 * bounce), null for the others (accepted, for a message that was not taken, or never answered);
 * nothing when MAIL FROM was not accepted (what follows it says nothing about a recipient). A
 * Postfix relay says `421 4.7.0 … Error: too many errors` after enough refused recipients, and
 * every retry ended there while these answers were thrown away: nobody was delivered or bounced.
 */
export function rcptRefusals(t: SmtpTransaction, count: number): Array<SmtpReply | null> {
  if (!positive(t.mail)) return []
  return Array.from({ length: count }, (_, i) => {
    const r = t.rcpt[i]
    return r && !positive(r) && r.code !== 421 ? r : null
  })
}

/**
 * One reply per envelope recipient from a transaction: a refused MAIL FROM, DATA or message
 * concerns every recipient (`message`); a refused RCPT TO that recipient alone (`rcpt`); the
 * others get the answer to the message.
 */
export function repliesOf(envelopeTo: string[], t: SmtpTransaction): RecipientReply[] {
  const whole = (r: SmtpReply): RecipientReply[] =>
    envelopeTo.map((address) => ({ address, stage: 'message', code: r.code, text: replyText(r.text) }))
  if (!positive(t.mail)) return whole(t.mail)
  const end = t.final ?? (t.data && t.data.code !== 354 ? t.data : null)
  return envelopeTo.map((address, i) => {
    const rcpt = t.rcpt[i]
    if (!rcpt || !positive(rcpt))
      return {
        address,
        stage: 'rcpt',
        code: rcpt?.code ?? null,
        text: replyText(rcpt?.text ?? 'no answer to RCPT TO'),
      }
    if (!end) return { address, stage: 'message', code: null, text: 'the relay did not answer the message' }
    return { address, stage: 'message', code: end.code, text: replyText(end.text) }
  })
}

/**
 * One reply per envelope recipient when the relay gave no answer about the message (`broken`: the
 * session broke, or the breaker is open): a recipient it had refused (`refused`, rcptRefusals)
 * keeps that answer; the others wait for a retry with `broken`.
 */
export function brokenReplies(
  envelopeTo: string[],
  refused: ReadonlyArray<SmtpReply | null>,
  broken: { code: number | null; text: string },
): RecipientReply[] {
  return envelopeTo.map((address, i) => {
    const r = refused[i]
    if (r) return { address, stage: 'rcpt', code: r.code, text: replyText(r.text) }
    return { address, stage: 'connection', ...broken }
  })
}

const CRLF_DOT = Buffer.from('\r\n.')
const DOT = 0x2e
const LF = 0x0a

/**
 * The message as it goes after DATA (RFC 5321 4.5.2): every line starting with a dot gets a
 * second one, and the message ends with CRLF, then `.` CRLF. Rendered messages use CRLF line
 * ends; a message without a leading-dot line (nearly all) is not copied.
 */
export function dataBlock(raw: Buffer): Buffer[] {
  const parts: Buffer[] = []
  let from = 0
  if (raw[0] === DOT) {
    parts.push(Buffer.from('.'))
  }
  for (let i = raw.indexOf(CRLF_DOT); i !== -1; i = raw.indexOf(CRLF_DOT, i + 3)) {
    parts.push(raw.subarray(from, i + 3), Buffer.from('.'))
    from = i + 3
  }
  parts.push(from === 0 ? raw : raw.subarray(from))
  const endsWithCrlf = raw.length >= 2 && raw[raw.length - 2] === 0x0d && raw[raw.length - 1] === LF
  parts.push(Buffer.from(endsWithCrlf ? '.\r\n' : '\r\n.\r\n'))
  return parts
}

/** True when the message has bytes above 127 (BODY=8BITMIME then, where the relay offers it). */
export function hasEightBit(raw: Buffer): boolean {
  for (let i = 0; i < raw.length; i++) if (raw[i]! > 127) return true
  return false
}

/** Any character outside ASCII (the range starts at the space: addresses hold no control characters). */
const NON_ASCII = /[^ -~]/

/** An envelope address as it goes in MAIL FROM / RCPT TO: an internationalised domain as punycode. */
export function envelopeAddress(address: string): string {
  const at = address.lastIndexOf('@')
  const domain = address.slice(at + 1)
  if (at < 0 || !NON_ASCII.test(domain)) return address
  return `${address.slice(0, at + 1)}${asciiDomain(domain)}`
}

/** True when the (punycoded) address still needs SMTPUTF8: a non-ASCII local part. */
export const needsUtf8 = (address: string): boolean => NON_ASCII.test(address)

/**
 * Our own answer for a non-ASCII address the relay cannot take: without SMTPUTF8 it must not be
 * offered at all (RFC 6531 3.4), and a relay given one anyway refuses it like a bad address,
 * which would have bounced (and suppressed) a good one. `5.6.7` is the status RFC 6531 gives it.
 */
export const NO_SMTPUTF8: SmtpReply = {
  code: 553,
  text: '553 5.6.7 Not sent: the address is not ASCII and the relay does not offer SMTPUTF8',
}

/**
 * Splits an envelope for a relay without SMTPUTF8: the recipients it can take, or null when
 * nothing can go (a non-ASCII sender, or no ASCII recipient left).
 */
export function asciiEnvelope(from: string, to: string[]): string[] | null {
  if (needsUtf8(from)) return null
  const ascii = to.filter((a) => !needsUtf8(a))
  return ascii.length ? ascii : null
}

/** The transaction for the ASCII recipients, with NO_SMTPUTF8 in the place of the others. */
export function withUnsentUtf8(to: string[], t: SmtpTransaction): SmtpTransaction {
  // A refused MAIL FROM concerns every recipient already.
  if (!positive(t.mail)) return t
  return { ...t, rcpt: amongUnsentUtf8(to, t.rcpt) }
}

/** Answers of the ASCII recipients (`sent`, one each, in order) among all of `to`, NO_SMTPUTF8 for the others. */
export function amongUnsentUtf8<T extends SmtpReply | null>(
  to: string[],
  sent: readonly T[],
): Array<T | SmtpReply> {
  const rest = [...sent]
  return to.map((a) => (needsUtf8(a) ? NO_SMTPUTF8 : rest.shift()!))
}
