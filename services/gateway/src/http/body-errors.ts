import { MailerError } from '@mailer/contracts'
import type { Response } from 'express'

/** The content codings the body parser inflates (RFC 9110 8.4.1); anything else it refuses. */
export const BODY_CODINGS = 'gzip, deflate, br'

/**
 * The contract error for a body the parser (express.raw) could not read, by its reason: over
 * MAX_BODY_BYTES (counted once inflated), a Content-Encoding it does not inflate, bytes that do not
 * inflate as their Content-Encoding says, anything else (a Content-Length the body did not match).
 * All of them used to say "could not be read", which named none of these. The header's value is
 * not quoted back: it is the caller's text.
 */
export function bodyReadError(err: { type?: string; code?: string }, maxBodyBytes: number): MailerError {
  if (err.type === 'entity.too.large')
    return new MailerError('payload_too_large', `The request body is larger than ${maxBodyBytes} bytes`)
  if (err.type === 'encoding.unsupported')
    return new MailerError(
      'invalid_body',
      `The request body's Content-Encoding is not supported: send it as is, or with one of ${BODY_CODINGS}`,
    )
  if (typeof err.code === 'string' && err.code.startsWith('Z_'))
    return new MailerError(
      'invalid_body',
      'The request body could not be decompressed as its Content-Encoding says',
    )
  return new MailerError('invalid_body', 'The request body could not be read')
}

/**
 * The answer to a body that could not be read: its error, and for a coding refused the
 * `Accept-Encoding` of the ones that would have been taken (RFC 9110 12.5.3).
 */
export function refuseBodyRead(
  res: Response,
  err: { type?: string; code?: string },
  maxBodyBytes: number,
): MailerError {
  if (err.type === 'encoding.unsupported') res.setHeader('Accept-Encoding', BODY_CODINGS)
  return bodyReadError(err, maxBodyBytes)
}
