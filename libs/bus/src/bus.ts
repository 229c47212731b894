import { type NatsTls, parseNatsUrl } from '@mailer/config'
import type { Logger, Metrics } from '@mailer/observability'
import type { JetStreamClient, JetStreamManager, NatsConnection, PubAck, Subscription } from 'nats'
import type { z } from 'zod'
import { coalesceFlushes } from './coalesced-flush.js'
import { encodeJson } from './codec.js'
import { connectWhenReachable } from './first-connect.js'
import { type InvalidationHandlers, listenForInvalidations } from './invalidations.js'
import { publishDurable } from './publish-durable.js'
import { ReconnectHooks } from './reconnect-hooks.js'
import { ReplyInbox } from './reply-inbox.js'
import { DEFAULT_REQUEST_TIMEOUT_MS, type RequestOptions, Requests } from './requests.js'
import { type Handler, Responder } from './responder.js'

export interface BusOptions {
  url: string
  /** Prepended to every subject/stream/consumer (`NATS_PREFIX`). */
  prefix?: string
  /** Connection name, shown by `nats server report connections`. */
  name: string
  /** Replicas the streams are brought to (`NATS_STREAM_REPLICAS`); unset leaves them as they are. */
  streamReplicas?: number
  /** TLS settings (NATS_TLS_*, natsTls()); unset: TLS when the server requires or offers it. */
  tls?: NatsTls
  /** Hears of each failed try while no server can be reached at start (the error of that try). */
  onWait?: (err: unknown) => void
  logger: Logger
  metrics: Metrics
}

/**
 * The service's NATS connection: prefixed names, typed request-reply where errors travel as
 * data (requests.ts, responder.ts), JetStream publishes (publish-durable.ts), core pub/sub for
 * cache invalidations (invalidations.ts), and JetStream handles.
 */
export class Bus {
  readonly js: JetStreamClient
  /** Request handlers (`serve`), stopped first at shutdown. */
  private readonly served: Subscription[] = []
  /** Requests being answered, which a shutdown lets finish. */
  private readonly inflight = new Set<Promise<unknown>>()
  /** Fan-out listeners (`subscribeInvalidations`), kept until the connection drains. */
  private readonly subs: Subscription[] = []
  /** Answers to this connection's requests and JetStream publishes. */
  private readonly inbox: ReplyInbox
  private readonly requests: Requests
  private readonly responder: Responder
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
    this.requests = new Requests(this.inbox, this, opts.metrics)
    this.responder = new Responder(this, opts.metrics)
  }

  /**
   * Connects, waiting for as long as no server can be reached; throws a ConfigError naming the
   * setting when waiting would not help (a refused login, a certificate not trusted: first-connect.ts).
   */
  static async connect(opts: BusOptions): Promise<Bus> {
    const nc = await connectWhenReachable(
      {
        ...parseNatsUrl(opts.url),
        ...(opts.tls ? { tls: opts.tls } : {}),
        name: opts.name,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
        pingInterval: 10_000,
        // Without this every request and JetStream publish builds an Error to keep its async stack
        // (several % of the gateway's and the email service's CPU at load; bench/README.md).
        // Timeouts become 503 service_unavailable here anyway.
        noAsyncTraces: true,
      },
      opts.onWait ?? (() => undefined),
    )
    coalesceFlushes(nc)
    const jsm = await nc.jetstreamManager()
    const bus = new Bus(nc, jsm, opts)
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect') bus.requests.lost()
        if (s.type === 'reconnect') {
          bus.requests.reconnected()
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
    return this.requests.connected && !this.nc.isClosed()
  }

  /**
   * How many times the connection has dropped so far. Core NATS broadcasts (cache invalidations)
   * sent while it was down never arrive, and the drop itself is only seen once the client notices
   * it (at once for a closed socket, within two missed pings, 20 s, for a silent one): what was
   * read before a drop may have been changed meanwhile without a word (DeliveryWorker).
   */
  get linkDrops(): number {
    return this.requests.drops
  }

  /** The largest message the NATS server takes (its `max_payload`, 1 MiB unless configured). */
  get maxPayload(): number {
    return this.nc.info?.max_payload ?? 1024 * 1024
  }

  /**
   * Request-reply. Resolves with the reply's result (validated by `schema` when given) or
   * throws the MailerError the responder sent. No responder, or no answer in time, is 503
   * `service_unavailable`, which callers may retry; so is a call made or waiting while the
   * connection is down (these three as `Unreachable`, unlike a 503 the responder sent).
   */
  request<S extends z.ZodType = z.ZodUnknown>(
    name: string,
    payload: unknown,
    opts: RequestOptions<S> = {},
  ): Promise<z.infer<S>> {
    return this.requests.request(name, payload, opts)
  }

  /**
   * A JetStream publish, de-duplicated by `msgId` within the stream's window: resolves with the
   * stream's acknowledgement (the message is stored) or throws (no stream on the subject, no
   * answer in time, the stream refused it, or UnpublishableMessage: larger than the server takes).
   */
  publishDurable(
    subject: string,
    data: Uint8Array,
    msgId: string,
    timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS,
  ): Promise<PubAck> {
    return publishDurable(this.inbox, subject, data, msgId, { timeoutMs, maxPayload: this.maxPayload })
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
        // `answer` answers every error itself; what is left (the answer could not be sent: the
        // connection closed meanwhile) is logged here, not left to crash the process.
        const p = this.responder
          .answer(name, schema, handler, msg)
          .catch((e: unknown) => this.opts.logger.warn({ err: e, subject }, 'could not answer a request'))
        this.inflight.add(p)
        void p.finally(() => this.inflight.delete(p))
      },
    })
    this.served.push(sub)
  }

  /** Core NATS publish (fire and forget): cache invalidations and similar hints. */
  publish(name: string, payload: unknown): void {
    this.nc.publish(this.subject(name), encodeJson(payload))
  }

  /**
   * Listens to the broadcasts on `name` (every replica gets every message): `onMessage` for each,
   * and `onMissed` after every reconnect, as the broadcasts sent meanwhile are lost. The only core
   * subscription on offer, so that a cache cannot be given the one without the other.
   */
  subscribeInvalidations(name: string, handlers: InvalidationHandlers): void {
    this.subs.push(listenForInvalidations(this, name, this.subject(name), handlers))
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
