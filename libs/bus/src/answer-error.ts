import { MailerError } from '@mailer/contracts'
import { isDatabaseUnavailable } from '@mailer/db'
import type { Logger } from '@mailer/observability'
import { ErrorCode, type Msg, NatsError } from 'nats'
import { encodeError } from './codec.js'

/**
 * Answers a request whose handler threw, and says how it ended (the handled-requests metric's
 * outcome): a MailerError crosses the bus as data; PostgreSQL down or restarting is an outage, not
 * a bug (503, which clients may retry); anything else is logged and answered 500 `internal`,
 * never with its stack.
 */
export function answerError(
  err: unknown,
  msg: Msg,
  ctx: { subject: string; requestId: string | undefined; logger: Logger; maxPayload: number },
): 'rejected' | 'error' {
  const { subject, requestId, logger } = ctx
  if (err instanceof MailerError) {
    if (msg.reply) msg.respond(encodeError(err))
    return err.status >= 500 ? 'error' : 'rejected'
  }
  if (isDatabaseUnavailable(err)) {
    logger.warn({ err: String(err), subject, requestId }, 'database unavailable')
    if (msg.reply)
      msg.respond(
        encodeError(new MailerError('service_unavailable', 'The database is unavailable; retry shortly')),
      )
    return 'error'
  }
  if (err instanceof NatsError && err.code === ErrorCode.MaxPayloadExceeded)
    logger.error(
      { subject, requestId, maxPayload: ctx.maxPayload },
      "the reply is larger than the NATS server's max_payload: raise it (docs/operations.md)",
    )
  else logger.error({ err, subject, requestId }, 'unexpected error while handling request')
  if (msg.reply)
    msg.respond(
      encodeError(new MailerError('internal', `Internal error (request ${requestId ?? 'unknown'})`)),
    )
  return 'error'
}
