import { MailerError } from '@mailer/contracts'
import type { Request } from 'express'

/**
 * The parsed JSON body, `undefined` when none was sent. The raw bytes were read by
 * `express.raw` for every content type so that a missing `Content-Type` still parses.
 */
export function jsonBody(req: Request): unknown {
  const raw = req.body
  if (!Buffer.isBuffer(raw) || raw.length === 0) return undefined
  const text = raw.toString('utf8')
  if (text.trim() === '') return undefined
  try {
    return JSON.parse(text)
  } catch {
    throw new MailerError('invalid_body', 'The request body is not valid JSON')
  }
}
