import { MailerError, usableRequestId } from '@mailer/contracts'
import type { Logger, Metrics } from '@mailer/observability'
import type { Msg } from 'nats'
import type { z } from 'zod'
import { answerError } from './answer-error.js'
import { decodeJson, encodeJson } from './codec.js'

export type Handler<Req> = (request: Req, msg: Msg) => Promise<unknown>

/** What answering needs of the connection (the Bus). */
interface Connection {
  readonly logger: Logger
  readonly maxPayload: number
}

/** Answers the requests to the subjects a connection serves (`Bus.serve`), timing each. */
export class Responder {
  private readonly seconds

  constructor(
    private readonly conn: Connection,
    metrics: Metrics,
  ) {
    this.seconds = metrics.histogram('nats_handled_seconds', 'NATS requests served, by subject and outcome', [
      'subject',
      'outcome',
    ])
  }

  /**
   * One request to a served subject: validated, handed to its handler, and answered with the
   * result, or with the error as data (answer-error.ts).
   */
  async answer<S extends z.ZodType>(
    name: string,
    schema: S,
    handler: Handler<z.infer<S>>,
    msg: Msg,
  ): Promise<void> {
    const end = this.seconds.startTimer({ subject: name })
    let requestId: string | undefined
    try {
      let raw: { caller?: { requestId?: string }; requestId?: string } | undefined
      try {
        raw = decodeJson(msg.data) as typeof raw
      } catch {
        // In-cluster RPC callers write their own payloads: not JSON is their mistake, not ours.
        throw new MailerError('invalid_body', `Malformed request on ${name}: not JSON`)
      }
      // RPC callers carry theirs in the X-Request-Id header (rpc-entry.ts), when they send one.
      requestId =
        raw?.caller?.requestId ?? raw?.requestId ?? usableRequestId(msg.headers?.get('X-Request-Id'))
      const parsed = schema.safeParse(raw)
      if (!parsed.success) {
        const issue = parsed.error.issues[0]
        throw new MailerError(
          'invalid_body',
          `Malformed request on ${name}: ${issue?.message ?? 'invalid'}`,
          {
            param: issue?.path.join('.') || undefined,
          } as { param?: string },
        )
      }
      const result = await handler(parsed.data, msg)
      if (msg.reply) msg.respond(encodeJson(result))
      end({ outcome: 'ok' })
    } catch (err) {
      end({
        outcome: answerError(err, msg, {
          subject: name,
          requestId,
          logger: this.conn.logger,
          maxPayload: this.conn.maxPayload,
        }),
      })
    }
  }
}
