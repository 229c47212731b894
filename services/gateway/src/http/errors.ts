import { MailerError } from '@mailer/contracts'
import type { Logger } from '@mailer/observability'
import type { Response } from 'express'

/**
 * The one place where errors become HTTP: status from the error, the contract's body shape,
 * `Retry-After: 60` on rate limits. Anything that is not a MailerError is logged with the
 * request id and answered as 500 `internal` without details.
 */
export function sendError(res: Response, err: unknown, logger: Logger, requestId: string): void {
  let e: MailerError
  if (err instanceof MailerError) {
    e = err
    if (e.status >= 500) logger.warn({ requestId, code: e.code }, e.message)
  } else {
    logger.error({ err, requestId }, 'unexpected error')
    e = new MailerError('internal', `Internal error; quote request id ${requestId}`)
  }
  if (e.code === 'rate_limited') res.setHeader('Retry-After', '60')
  if (e.code === 'service_unavailable') res.setHeader('Retry-After', '1')
  const body: Record<string, unknown> = { type: e.type, code: e.code, message: e.message }
  if (e.param !== undefined) body.param = e.param
  res.status(e.status).json({ error: body })
}
