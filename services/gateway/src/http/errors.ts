import { MailerError } from '@mailer/contracts'
import { isDatabaseUnavailable } from '@mailer/db'
import type { Logger } from '@mailer/observability'
import type { Response } from 'express'

/**
 * The one place where errors become HTTP: status from the error, the contract's body shape,
 * `Retry-After: 60` on rate limits (unless the route set the real wait), `WWW-Authenticate` on key
 * failures. PostgreSQL down or restarting (the dashboard's sign-ins and sign-outs) is 503
 * `service_unavailable`, as over the bus (answerError). Anything else that is not a MailerError
 * is logged with the request id and answered as 500 `internal` without details.
 */
export function sendError(res: Response, err: unknown, logger: Logger, requestId: string): void {
  let e: MailerError
  if (isDatabaseUnavailable(err))
    err = new MailerError('service_unavailable', 'The database is unavailable; retry shortly')
  if (err instanceof MailerError) {
    e = err
    if (e.status >= 500) logger.warn({ requestId, code: e.code }, e.message)
  } else {
    logger.error({ err, requestId }, 'unexpected error')
    e = new MailerError('internal', `Internal error; quote request id ${requestId}`)
  }
  // A 401 names the scheme it wants (RFC 9110 11.6.1); a key sent and refused is RFC 6750's
  // invalid_token. The dashboard's cookie session (invalid_session) has no such scheme.
  if (e.code === 'missing_api_key') res.setHeader('WWW-Authenticate', 'Bearer')
  else if (e.status === 401 && e.code !== 'invalid_session')
    res.setHeader('WWW-Authenticate', 'Bearer error="invalid_token"')
  // A route that knows the real wait (the dashboard's sign-in lockout) has set it already.
  if (e.code === 'rate_limited' && !res.hasHeader('Retry-After')) res.setHeader('Retry-After', '60')
  if (e.code === 'service_unavailable') res.setHeader('Retry-After', '1')
  const body: Record<string, unknown> = { type: e.type, code: e.code, message: e.message }
  if (e.param !== undefined) body.param = e.param
  res.status(e.status).json({ error: body })
}
