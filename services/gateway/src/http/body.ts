import { assertStorable, MailerError } from '@mailer/contracts'
import type { Request } from 'express'

/**
 * The parsed JSON body, `undefined` when none was sent. The raw bytes were read by
 * `express.raw` for every content type so that a missing `Content-Type` still parses.
 */
export function jsonBody(req: Request, opts: { checksText?: boolean } = {}): unknown {
  const raw = req.body
  if (!Buffer.isBuffer(raw) || raw.length === 0) return undefined
  const text = raw.toString('utf8')
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
