import { assertStorable, MailerError } from '@mailer/contracts'
import type { Request } from 'express'

/**
 * JSON text is UTF-8 (RFC 8259 8.1), whatever charset the Content-Type names. `fatal`: bytes that
 * are not UTF-8 were decoded to U+FFFD and stored as such (`café` sent as Latin-1 became `caf�`);
 * they are refused instead. A leading byte order mark, which some Windows tools write, is dropped
 * (TextDecoder's default; RFC 8259 lets a parser ignore it) rather than failing JSON.parse.
 */
const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * The parsed JSON body, `undefined` when none was sent. The raw bytes were read by
 * `express.raw` for every content type so that a missing `Content-Type` still parses.
 */
export function jsonBody(req: Request, opts: { checksText?: boolean } = {}): unknown {
  const raw = req.body
  if (!Buffer.isBuffer(raw) || raw.length === 0) return undefined
  let text: string
  try {
    text = utf8.decode(raw)
  } catch {
    throw new MailerError('invalid_body', 'The request body is not UTF-8; JSON is sent as UTF-8')
  }
  if (text.trim() === '') return undefined
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new MailerError('invalid_body', 'The request body is not valid JSON')
  }
  // Valid JSON that no route could store (NUL, a lone surrogate) or pass on (deep nesting) is
  // refused here, for every route, rather than failing later as a 500; a route whose handler
  // checks the text itself (RouteDef.checksText) gets only the nesting checked here.
  assertStorable(body, { text: !opts.checksText })
  return body
}
