import { MailerError } from '@mailer/contracts'
import type { Metrics } from '@mailer/observability'
import { ErrorCode, type Msg, NatsError } from 'nats'
import type { z } from 'zod'
import { decodeReply, encodeJson } from './codec.js'
import { ReplyError, type ReplyInbox } from './reply-inbox.js'
import { Unreachable } from './unreachable.js'

/** Default wait for a request-reply answer before it becomes 503 `service_unavailable`. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 5_000

export interface RequestOptions<S extends z.ZodType> {
  timeoutMs?: number
  schema?: S
}

/** What a request needs of the connection it goes out on (the Bus). */
interface Connection {
  subject(name: string): string
  readonly maxPayload: number
}

/**
 * The request-reply calls a connection makes (`Bus.request`), where errors travel as data. A call
 * waiting when the connection drops fails at once, as does one made before it is back.
 */
export class Requests {
  /** False between a disconnect and the reconnect: requests fail at once instead of waiting. */
  private up = true
  /** Disconnects so far (`Bus.linkDrops`). */
  private dropCount = 0
  /** Requests waiting for a reply; a disconnect fails them at once (their reply would be lost). */
  private readonly waiting = new Set<(err: MailerError) => void>()
  private readonly seconds

  constructor(
    private readonly inbox: ReplyInbox,
    private readonly conn: Connection,
    metrics: Metrics,
  ) {
    this.seconds = metrics.histogram(
      'nats_request_seconds',
      'NATS request-reply calls made, by subject and outcome',
      ['subject', 'outcome'],
    )
  }

  async request<S extends z.ZodType = z.ZodUnknown>(
    name: string,
    payload: unknown,
    opts: RequestOptions<S> = {},
  ): Promise<z.infer<S>> {
    const end = this.seconds.startTimer({ subject: name })
    if (!this.up) {
      end({ outcome: 'disconnected' })
      throw unavailable(name)
    }
    let reply: Msg
    let fail!: (err: MailerError) => void
    const lost = new Promise<never>((_, reject) => {
      fail = reject
    })
    this.waiting.add(fail)
    try {
      reply = await Promise.race([
        this.inbox.request(this.conn.subject(name), encodeJson(payload), {
          timeoutMs: opts.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
        }),
        lost,
      ])
    } catch (err) {
      if (err instanceof MailerError) {
        end({ outcome: 'disconnected' })
        throw err
      }
      const code = err instanceof NatsError ? err.code : ''
      const noAnswer = err instanceof ReplyError
      end({ outcome: noAnswer && err.reason === 'no_responders' ? 'no_responders' : 'timeout' })
      // Larger than the NATS server's max_payload: the request can never pass this deployment's
      // bus as it is (the operator raises max_payload: docs/operations.md).
      if (code === ErrorCode.MaxPayloadExceeded) {
        throw new MailerError(
          'payload_too_large',
          `The request is larger than this deployment's message limit (NATS max_payload, ${this.conn.maxPayload} bytes)`,
        )
      }
      if (noAnswer || code === ErrorCode.ConnectionClosed || code === ErrorCode.Disconnect) {
        throw new Unreachable(`The service behind ${name} did not answer; retry shortly`)
      }
      throw err
    } finally {
      this.waiting.delete(fail)
    }
    try {
      const result = decodeReply(reply.data)
      end({ outcome: 'ok' })
      return opts.schema ? (opts.schema.parse(result) as z.infer<S>) : (result as z.infer<S>)
    } catch (err) {
      end({ outcome: err instanceof MailerError ? 'error' : 'bad_reply' })
      throw err
    }
  }

  /**
   * The connection dropped: a reply to a request in flight may never come (a server restart loses
   * it), and new requests would only wait in the reconnect buffer, so both fail at once with 503.
   */
  lost(): void {
    this.up = false
    this.dropCount++
    for (const fail of this.waiting) fail(new Unreachable('Lost the connection to NATS; retry shortly'))
    this.waiting.clear()
  }

  reconnected(): void {
    this.up = true
  }

  /** False from a disconnect until the reconnect. */
  get connected(): boolean {
    return this.up
  }

  get drops(): number {
    return this.dropCount
  }
}

const unavailable = (name: string) =>
  new Unreachable(`The service behind ${name} cannot be reached right now; retry shortly`)
