import { parseNatsUrl } from '@mailer/config'
import { MailerError } from '@mailer/contracts'
import type { Logger, Metrics } from '@mailer/observability'
import {
  connect,
  ErrorCode,
  headers,
  type JetStreamClient,
  type JetStreamManager,
  type Msg,
  type NatsConnection,
  NatsError,
  type PubAck,
  type Subscription,
} from 'nats'
import type { z } from 'zod'
import { answerError } from './answer-error.js'
import { coalesceFlushes } from './coalesced-flush.js'
import { decodeJson, decodeReply, encodeJson } from './codec.js'
import { ReconnectHooks } from './reconnect-hooks.js'
import { ReplyError, ReplyInbox } from './reply-inbox.js'
import { UnpublishableMessage } from './unpublishable.js'

export interface BusOptions {
  url: string
  /** Prepended to every subject/stream/consumer (`NATS_PREFIX`). */
  prefix?: string
  /** Connection name, shown by `nats server report connections`. */
  name: string
  /** Replicas the streams are brought to (`NATS_STREAM_REPLICAS`); unset leaves them as they are. */
  streamReplicas?: number
  logger: Logger
  metrics: Metrics
}

export type Handler<Req> = (request: Req, msg: Msg) => Promise<unknown>

/** Default wait for a request-reply answer before it becomes 503 `service_unavailable`. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 5_000
/** The headers block of a publish carrying only `Nats-Msg-Id`, as the client encodes it. */
const msgIdHeaderBytes = (msgId: string): number =>
  Buffer.byteLength(`NATS/1.0\r\nNats-Msg-Id: ${msgId}\r\n\r\n`)

/**
 * The service's NATS connection: prefixed names, typed request-reply where errors travel as
 * data, core pub/sub, and JetStream handles.
 */
export class Bus {
  readonly js: JetStreamClient
  /** Request handlers (`serve`), stopped first at shutdown. */
  private readonly served: Subscription[] = []
  /** Fan-out listeners (`subscribe`: cache invalidations), kept until the connection drains. */
  private readonly subs: Subscription[] = []
  private readonly inflight = new Set<Promise<unknown>>()
  /** False between a disconnect and the reconnect: requests fail at once instead of waiting. */
  private connected = true
  /** Requests waiting for a reply; a disconnect fails them at once (their reply would be lost). */
  private readonly waiting = new Set<(err: MailerError) => void>()
  private readonly requestSeconds
  private readonly handledSeconds
  /** Answers to this connection's requests and JetStream publishes. */
  private readonly inbox: ReplyInbox
  /** Streams and consumers declared again, and caches dropped, after each reconnect. */
  readonly reconnects: ReconnectHooks

  private constructor(
    readonly nc: NatsConnection,
    readonly jsm: JetStreamManager,
    private readonly opts: BusOptions,
  ) {
    this.js = nc.jetstream()
    this.inbox = new ReplyInbox(nc)
    this.reconnects = new ReconnectHooks(opts.logger)
    this.requestSeconds = opts.metrics.histogram(
      'nats_request_seconds',
      'NATS request-reply calls made, by subject and outcome',
      ['subject', 'outcome'],
    )
    this.handledSeconds = opts.metrics.histogram(
      'nats_handled_seconds',
      'NATS requests served, by subject and outcome',
      ['subject', 'outcome'],
    )
  }

  static async connect(opts: BusOptions): Promise<Bus> {
    const nc = await connect({
      ...parseNatsUrl(opts.url),
      name: opts.name,
      maxReconnectAttempts: -1,
      // A server not reachable at start is retried like a lost one (startRuntime says so meanwhile).
      waitOnFirstConnect: true,
      reconnectTimeWait: 500,
      pingInterval: 10_000,
      // Without this every request and JetStream publish builds an Error to keep its async stack
      // (several % of the gateway's and the email service's CPU at load; bench/README.md).
      // Timeouts become 503 service_unavailable here anyway.
      noAsyncTraces: true,
    })
    coalesceFlushes(nc)
    const jsm = await nc.jetstreamManager()
    const bus = new Bus(nc, jsm, opts)
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect') bus.lost()
        if (s.type === 'reconnect') {
          bus.connected = true
          void bus.reconnects.reconnected(() => nc.isClosed())
        }
        if (s.type === 'disconnect' || s.type === 'reconnect' || s.type === 'error') {
          opts.logger.warn({ status: s.type, data: String(s.data) }, 'nats connection status')
        }
      }
    })()
    return bus
  }

  get prefix(): string {
    return this.opts.prefix ?? ''
  }

  /** The service's root logger (entry points add the request id to their lines). */
  get logger(): Logger {
    return this.opts.logger
  }

  /** The subject as it travels (with the deployment prefix). */
  subject(name: string): string {
    return this.prefix ? `${this.prefix}.${name}` : name
  }

  /** `NATS_STREAM_REPLICAS`, if set. */
  get streamReplicas(): number | undefined {
    return this.opts.streamReplicas
  }

  /** Stream and consumer names: prefix upper-cased, joined with `_` (no dots allowed). */
  streamName(name: string): string {
    return this.prefix ? `${this.prefix.toUpperCase()}_${name}` : name
  }

  consumerName(name: string): string {
    return this.prefix ? `${this.prefix}-${name}` : name
  }

  /**
   * Connected to a NATS server right now: false from a disconnect until the reconnect (the client
   * keeps retrying for ever, so the connection is not closed meanwhile) and once closed.
   */
  get isConnected(): boolean {
    return this.connected && !this.nc.isClosed()
  }

  /** The largest message the NATS server takes (its `max_payload`, 1 MiB unless configured). */
  get maxPayload(): number {
    return this.nc.info?.max_payload ?? 1024 * 1024
  }

  /**
   * Request-reply. Resolves with the reply's result (validated by `schema` when given) or
   * throws the MailerError the responder sent. No responder, or no answer in time, is 503
   * `service_unavailable`, which callers may retry.
   */
  async request<S extends z.ZodType = z.ZodUnknown>(
    name: string,
    payload: unknown,
    opts: { timeoutMs?: number; schema?: S } = {},
  ): Promise<z.infer<S>> {
    const end = this.requestSeconds.startTimer({ subject: name })
    if (!this.connected) {
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
        this.inbox.request(this.subject(name), encodeJson(payload), {
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
          `The request is larger than this deployment's message limit (NATS max_payload, ${this.maxPayload} bytes)`,
        )
      }
      if (noAnswer || code === ErrorCode.ConnectionClosed || code === ErrorCode.Disconnect) {
        throw new MailerError(
          'service_unavailable',
          `The service behind ${name} did not answer; retry shortly`,
        )
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
   * A JetStream publish, de-duplicated by `msgId` within the stream's window: resolves with the
   * stream's acknowledgement (the message is stored) or throws (no stream on the subject, no
   * answer in time, or the stream refused it). What `js.publish` does, through the shared inbox.
   */
  async publishDurable(
    subject: string,
    data: Uint8Array,
    msgId: string,
    timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS,
  ): Promise<PubAck> {
    // The server's limit holds the headers too: over it with them, the client refuses the publish
    // with its own error, which the sweeper would retry for ever.
    const bytes = data.length + msgIdHeaderBytes(msgId)
    if (bytes > this.maxPayload) throw new UnpublishableMessage(subject, msgId, bytes, this.maxPayload)
    const h = headers()
    h.set('Nats-Msg-Id', msgId)
    const reply = await this.inbox.request(subject, data, { timeoutMs, headers: h })
    const ack = decodeJson(reply.data) as Partial<PubAck> & {
      error?: { code?: number; description?: string }
    }
    if (ack.error)
      throw new Error(
        `JetStream refused the message on ${subject}: ${ack.error.description ?? ack.error.code}`,
      )
    if (!ack.stream) throw new Error(`JetStream answered ${subject} without a stream`)
    return {
      stream: ack.stream,
      seq: ack.seq ?? 0,
      duplicate: ack.duplicate ?? false,
      domain: ack.domain ?? '',
    }
  }

  /**
   * Serves a request-reply subject in the service's queue group. Requests are handled
   * concurrently; a thrown MailerError is replied as data, anything else is logged with the
   * request id and replied as 500 `internal` (never a stack trace).
   */
  serve<S extends z.ZodType>(
    name: string,
    schema: S,
    handler: Handler<z.infer<S>>,
    opts: { queue: string },
  ): void {
    const subject = this.subject(name)
    const sub = this.nc.subscribe(subject, {
      queue: opts.queue,
      callback: (err, msg) => {
        if (err) {
          this.opts.logger.error({ err, subject }, 'subscription error')
          return
        }
        // `handle` answers every error itself; what is left (the answer could not be sent: the
        // connection closed meanwhile) is logged here, not left to crash the process.
        const p = this.handle(name, schema, handler, msg).catch((e: unknown) =>
          this.opts.logger.warn({ err: e, subject }, 'could not answer a request'),
        )
        this.inflight.add(p)
        void p.finally(() => this.inflight.delete(p))
      },
    })
    this.served.push(sub)
  }

  private async handle<S extends z.ZodType>(
    name: string,
    schema: S,
    handler: Handler<z.infer<S>>,
    msg: Msg,
  ): Promise<void> {
    const end = this.handledSeconds.startTimer({ subject: name })
    let requestId: string | undefined
    try {
      let raw: { caller?: { requestId?: string }; requestId?: string } | undefined
      try {
        raw = decodeJson(msg.data) as typeof raw
      } catch {
        // In-cluster RPC callers write their own payloads: not JSON is their mistake, not ours.
        throw new MailerError('invalid_body', `Malformed request on ${name}: not JSON`)
      }
      requestId = raw?.caller?.requestId ?? raw?.requestId
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
          logger: this.opts.logger,
          maxPayload: this.maxPayload,
        }),
      })
    }
  }

  /**
   * The connection dropped: a reply to a request in flight may never come (a server restart loses
   * it), and new requests would only wait in the reconnect buffer, so both fail at once with 503.
   */
  private lost(): void {
    this.connected = false
    for (const fail of this.waiting)
      fail(new MailerError('service_unavailable', 'Lost the connection to NATS; retry shortly'))
    this.waiting.clear()
  }

  /** Core NATS publish (fire and forget): cache invalidations and similar hints. */
  publish(name: string, payload: unknown): void {
    this.nc.publish(this.subject(name), encodeJson(payload))
  }

  /** Core NATS fan-out subscription (every replica gets every message). */
  subscribe(name: string, onMessage: (payload: unknown) => void): void {
    const sub = this.nc.subscribe(this.subject(name), {
      callback: (err, msg) => {
        if (err) return
        try {
          onMessage(decodeJson(msg.data))
        } catch (e) {
          this.opts.logger.warn({ err: e, subject: name }, 'bad message ignored')
        }
      },
    })
    this.subs.push(sub)
  }

  /** Makes sure everything published so far has reached the server. */
  flush(): Promise<void> {
    return this.nc.flush()
  }

  /**
   * Stop taking new requests and let the handlers answer those they hold. A shutdown does this
   * first, before it stops what the handlers use (pools, loops): a request taken after that
   * would have failed as a 500.
   */
  async stopServing(): Promise<void> {
    for (const s of this.served.splice(0)) s.unsubscribe()
    await Promise.allSettled([...this.inflight])
  }

  /**
   * Stop serving (if not yet done), then drain and close the connection. Listeners stay until
   * then: a gateway still answering its last HTTP requests must still hear of revoked keys.
   */
  async drain(): Promise<void> {
    await this.stopServing()
    for (const s of this.subs.splice(0)) s.unsubscribe()
    if (!this.nc.isClosed()) await this.nc.drain().catch(() => undefined)
    this.inbox.close()
  }

  /** Close without draining (tests simulating a crash). */
  async close(): Promise<void> {
    if (!this.nc.isClosed()) await this.nc.close()
    this.inbox.close()
  }
}

const unavailable = (name: string) =>
  new MailerError(
    'service_unavailable',
    `The service behind ${name} cannot be reached right now; retry shortly`,
  )
