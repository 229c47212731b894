import { CONTROL_CHARS_RE, fail, PROTO_KEY } from '@mailer/contracts'

const NAME_RE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
/** The contract's reserved names: fields the service writes itself from the send input. */
const RESERVED = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'subject',
  'reply-to',
  'date',
  'message-id',
  'content-type',
  'mime-version',
])
/**
 * Fields nobody but the service or the receiving servers may write, refused the same way: a second
 * sender (`Sender`, `Resent-*`) outside the domain check of `from`, a signature or trace a reader's
 * client may trust (`DKIM-Signature`, `ARC-*`, `Authentication-Results`, `Received`,
 * `Return-Path`), and MIME fields that would re-type the whole multipart body.
 */
const OWNED = new Set([
  'sender',
  'return-path',
  'dkim-signature',
  'received',
  'authentication-results',
  'arc-seal',
  'arc-message-signature',
  'arc-authentication-results',
  'content-transfer-encoding',
  'content-disposition',
  'content-id',
])
const isOwned = (lower: string) => RESERVED.has(lower) || OWNED.has(lower) || lower.startsWith('resent-')
/**
 * Fields whose value a reader takes as free text, so that RFC 2047 encoded words in it are read
 * back as the text: the `X-` extension fields, where custom data goes. Others a user may give
 * have a syntax of their own (message ids, URLs in angle brackets, key data), where encoded words
 * would not be decoded, so an unbroken run no line can hold is refused there.
 */
const isFreeText = (lower: string) => lower.startsWith('x-')
const MAX_VALUE_BYTES = 2048
const MAX_UNBROKEN = 990

/**
 * More than `max` printable ASCII characters in a row. One pass: the regex `[!-~]{991,}` was
 * tried again from every position of a run, about 2.6 ms for a 2 KB value of two 990-character
 * runs, on the accept path for every header of every email.
 */
function hasRunOver(s: string, max: number): boolean {
  let run = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c > 0x20 && c < 0x7f) {
      if (++run > max) return true
    } else run = 0
  }
  return false
}

/**
 * Custom headers (contract.md part 3): token names, values up to 2,048 bytes without CR/LF or other control characters (a tab is text), and
 * none of the names the service (or a receiving server) writes, each name once whatever its case.
 * Every problem is `invalid_header`.
 */
export function checkHeaders(raw: unknown): Record<string, string> {
  if (raw === undefined) return {}
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw fail('invalid_header', 'headers must be an object of header names to string values', 'headers')
  }
  const out: Record<string, string> = {}
  // Header names are case-insensitive (RFC 5322 1.2.2): `In-Reply-To` and `in-reply-to` are one
  // field, and both went into the message, where In-Reply-To, References (RFC 5322 3.6) and
  // List-Unsubscribe may appear only once. An object cannot repeat a key, so a second spelling is a
  // mistake to report, not a second value to send.
  const seen = new Map<string, string>()
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    const param = `headers.${name}`
    if (!NAME_RE.test(name)) throw fail('invalid_header', `'${name}' is not a valid header name`, param)
    const lower = name.toLowerCase()
    const first = seen.get(lower)
    if (first !== undefined)
      throw fail(
        'invalid_header',
        `${name} is given twice (as ${first} too); header names are case-insensitive`,
        param,
      )
    seen.set(lower, name)
    // A token by the contract's rule, but `out[name] = value` would hit the prototype setter and
    // drop the header without a word: refused by name, like the names the service owns.
    if (name === PROTO_KEY) throw fail('invalid_header', `${PROTO_KEY} cannot be a header name`, param)
    if (isOwned(lower))
      throw fail('invalid_header', `${name} is set by the service and cannot be given`, param)
    if (typeof value !== 'string') throw fail('invalid_header', `${name} must be a string`, param)
    if (/[\r\n]/.test(value)) throw fail('invalid_header', `${name} cannot contain line breaks`, param)
    if (CONTROL_CHARS_RE.test(value))
      throw fail('invalid_header', `${name} cannot contain control characters`, param)
    if (Buffer.byteLength(value, 'utf8') > MAX_VALUE_BYTES) {
      throw fail('invalid_header', `${name} is longer than ${MAX_VALUE_BYTES} bytes`, param)
    }
    // A header is folded at its spaces; a longer unbroken ASCII run would stay one line over
    // RFC 5322's 998 octets. The dispatcher writes the value of an `X-` field holding one
    // as RFC 2047 encoded words, folded between them and read back as the same text (a signed
    // URL in a custom header is such a run, and the contract takes values up to 2,048 bytes).
    // A name, or a field whose syntax has no encoded words, cannot be so written.
    if (name.length > MAX_UNBROKEN)
      throw fail('invalid_header', `${name} is a name of more than ${MAX_UNBROKEN} characters`, param)
    if (!isFreeText(lower) && hasRunOver(value, MAX_UNBROKEN))
      throw fail(
        'invalid_header',
        `${name} holds more than ${MAX_UNBROKEN} characters without a space`,
        param,
      )
    out[name] = value
  }
  return out
}
