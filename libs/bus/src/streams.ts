import type { Gauge, Logger, Metrics } from '@mailer/observability'
import {
  AckPolicy,
  type ConsumerConfig,
  DeliverPolicy,
  DiscardPolicy,
  type JsMsg,
  NatsError,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
} from 'nats'
import type { DbWaits } from './bounded-close.js'
import type { Bus } from './bus.js'
import { storageProblem } from './stream-storage.js'

export interface StreamDef {
  name: string
  subjects: readonly string[]
  description?: string
  /** Work-queue retention (one consumer; a message is removed once acknowledged) instead of limits. */
  workQueue?: boolean
  /** How long a message is kept (7 days unless set). */
  maxAgeSeconds?: number
  /**
   * A byte limit given to the stream when it is created, never on an update: one an operator set
   * by hand (`nats stream edit --max-bytes`) is kept.
   */
  maxBytesAtCreation?: number
  /** A full stream refuses new messages (the publisher sees it) instead of dropping its oldest. */
  discardNew?: boolean
}

const NANOS_PER_SECOND = 1_000_000_000

/** A JetStream duration (nanoseconds) from a setting in seconds, e.g. a consumer's `ack_wait`. */
export const secondsToNanos = (seconds: number): number => Math.round(seconds * NANOS_PER_SECOND)

/**
 * A consumer's ack wait unless its service sets one: how long a message pulled by a replica that
 * died (kill -9, a lost node) waits before another replica gets it. Short, because `consume` keeps
 * every message it is handling (and the one waiting for a slot) alive with heartbeats, so the ack
 * wait need not cover how long handling takes, only a crash; it must cover the time a message
 * waits in the replica's pull buffer, which has no heartbeats (`prefetch`).
 */
export const DEFAULT_ACK_WAIT_SECONDS = 10

/**
 * Creates or updates a stream so that every service can declare what it uses at start-up,
 * idempotently (upgrades need no manual step). File storage, limits retention unless the
 * definition asks for a work queue, a two-minute duplicate window for msgID de-duplication of
 * re-publishes, 7 days' age unless the definition says otherwise. An update merges into the
 * stream's configuration, so what is not set here (a byte limit, replicas when
 * `NATS_STREAM_REPLICAS` is unset) stays as an operator left it.
 */
export async function ensureStream(
  bus: Bus,
  def: StreamDef,
  overrides: Partial<StreamConfig> = {},
): Promise<void> {
  const cfg: Partial<StreamConfig> = {
    name: bus.streamName(def.name),
    subjects: def.subjects.map((s) => bus.subject(s)),
    retention: def.workQueue ? RetentionPolicy.Workqueue : RetentionPolicy.Limits,
    storage: StorageType.File,
    duplicate_window: 120 * NANOS_PER_SECOND,
    max_age: (def.maxAgeSeconds ?? 7 * 24 * 3600) * NANOS_PER_SECOND,
    ...(def.discardNew ? { discard: DiscardPolicy.New } : {}),
    ...(def.description ? { description: def.description } : {}),
    ...(bus.streamReplicas ? { num_replicas: bus.streamReplicas } : {}),
    ...overrides,
  }
  const atCreation: Partial<StreamConfig> =
    def.maxBytesAtCreation !== undefined ? { max_bytes: def.maxBytesAtCreation } : {}
  const upsert = async () => {
    try {
      await bus.jsm.streams.info(cfg.name!)
      await bus.jsm.streams.update(cfg.name!, cfg)
    } catch (err) {
      if (err instanceof NatsError && (err.api_error?.err_code === 10059 || /not found/i.test(err.message))) {
        await bus.jsm.streams.add({ ...atCreation, ...cfg })
        return
      }
      throw err
    }
  }
  // No room for the stream on the server (its byte limit is reserved from max_file_store) is a
  // setting to change, not a crash: a ConfigError naming the stream and the fix, so the service
  // exits 78 at start (startOrExit) and a reconnect's retry logs it, instead of a NatsError stack.
  const declare = () =>
    upsert().catch((err: unknown) => {
      throw storageProblem(err, cfg.name!, def.maxBytesAtCreation) ?? err
    })
  await declare()
  // Again after every reconnect: a server back without its store has lost the stream.
  bus.reconnects.declare(`stream:${cfg.name}`, declare)
}

/**
 * Creates or updates a durable pull consumer (explicit acks, unlimited redelivery, ack wait
 * `DEFAULT_ACK_WAIT_SECONDS` unless `cfg.ack_wait` says otherwise). An update applies a changed
 * ack wait to a consumer that already exists.
 */
export async function ensureConsumer(
  bus: Bus,
  stream: string,
  durable: string,
  cfg: Partial<ConsumerConfig> = {},
): Promise<string> {
  const name = bus.consumerName(durable)
  const full: Partial<ConsumerConfig> = {
    durable_name: name,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: secondsToNanos(DEFAULT_ACK_WAIT_SECONDS),
    max_deliver: -1,
    ...cfg,
  }
  const streamName = bus.streamName(stream)
  const declare = async () => {
    try {
      await bus.jsm.consumers.info(streamName, name)
      await bus.jsm.consumers.update(streamName, name, full)
    } catch (err) {
      if (err instanceof NatsError && (err.api_error?.err_code === 10014 || /not found/i.test(err.message))) {
        await bus.jsm.consumers.add(streamName, full)
      } else {
        throw err
      }
    }
  }
  await declare()
  // Again after every reconnect (after the streams, declared first): a server back without its
  // store has lost the consumer, and `consume` waits for it to exist again.
  bus.reconnects.declare(`consumer:${streamName}:${name}`, declare)
  return name
}

/** One gauge per name in a registry, shared by every consumer of the service (label `consumer`). */
function consumerGauge(metrics: Metrics, name: string, help: string): Gauge<'consumer'> {
  const existing = metrics.registry.getSingleMetric(metrics.prefix + name)
  return (existing as Gauge<'consumer'> | undefined) ?? metrics.gauge(name, help, ['consumer'])
}

export interface ConsumeOptions {
  stream: string
  durable: string
  /** Messages handled at once by this replica. */
  concurrency: number
  /**
   * Messages pulled ahead into this replica's buffer (default: twice `concurrency`, at least 16).
   * A buffered message is this replica's until its ack wait ends, without heartbeats (the client
   * holds it out of reach): consumers whose messages carry much work each keep it small, so
   * replicas share a burst and no buffered message outwaits the ack wait.
   */
  prefetch?: number
  logger: Logger
  metrics: Metrics
  handle: (msg: JsMsg) => Promise<void>
}

export interface RunningConsumer {
  /**
   * Stops pulling and waits for the messages in hand; with `waits`, at most as long as it lets
   * (the handlers left running were waiting on a database that does not answer: their messages
   * come back after the ack wait, as a killed pod's do).
   */
  stop(opts?: { waits?: DbWaits }): Promise<void>
}

/**
 * Pulls from a durable consumer and handles up to `concurrency` messages at once. The handler
 * acks, naks or terms; a handler that throws gets a short nak so the message comes back. Also
 * exports the consumer's pending and ack-pending counts as gauges.
 *
 * Every message in hand (being handled, or taken from the buffer and waiting for a slot) gets an
 * in-progress heartbeat (`working()`) every third of the consumer's ack wait: a handler slower than
 * the ack wait (a database stalling, a batch waiting for its turn) keeps its message, so it is
 * never handed to a second replica while this one still works on it, and the ack wait can be short
 * enough that a crashed replica's messages come back within seconds.
 */
export async function consume(bus: Bus, opts: ConsumeOptions): Promise<RunningConsumer> {
  const consumer = await bus.js.consumers.get(bus.streamName(opts.stream), bus.consumerName(opts.durable))
  const inflight = new Set<Promise<void>>()
  /** Messages in hand and not settled by their handler yet: the heartbeat keeps them ours. */
  const held = new Set<JsMsg>()
  let stopped = false
  const labels = { consumer: opts.durable }
  const pending = consumerGauge(
    opts.metrics,
    'consumer_pending',
    'Messages not yet delivered to the consumer',
  )
  const ackPending = consumerGauge(
    opts.metrics,
    'consumer_ack_pending',
    'Messages delivered but not yet acknowledged',
  )
  const poll = setInterval(() => {
    // Not info(true): that answers the copy cached when the consumer was looked up.
    consumer.info().then(
      (i) => {
        pending.set(labels, i.num_pending)
        ackPending.set(labels, i.num_ack_pending)
      },
      () => undefined,
    )
  }, 5_000)
  poll.unref()
  const heartbeat = setInterval(
    () => {
      for (const msg of held) {
        try {
          msg.working()
        } catch {
          // The connection is closing or gone: the message comes back after the ack wait.
        }
      }
    },
    heartbeatEveryMs((await consumer.info(true)).config.ack_wait ?? secondsToNanos(DEFAULT_ACK_WAIT_SECONDS)),
  )
  heartbeat.unref()

  const messages = await consumer.consume({
    max_messages: opts.prefetch ?? Math.max(opts.concurrency * 2, 16),
    // Pulls expire (and heartbeats are checked) every 10 s instead of 30: a consumer lost with the
    // server's store and declared again after the reconnect is looked for at that pace, so work
    // resumes within seconds rather than a minute.
    expires: 10_000,
  })
  const loop = (async () => {
    for await (const msg of messages) {
      if (stopped) {
        msg.nak()
        continue
      }
      held.add(msg)
      while (inflight.size >= opts.concurrency) await Promise.race(inflight)
      const p = opts.handle(msg).catch((err) => {
        opts.logger.error({ err, subject: msg.subject, seq: msg.seq }, 'message handler failed; will retry')
        try {
          msg.nak(2_000)
        } catch {
          // A handler a bounded stop left running can fail after the connection closed: the
          // message comes back after the ack wait; a throw here would crash the process.
        }
      })
      inflight.add(p)
      void p.finally(() => {
        inflight.delete(p)
        held.delete(msg)
      })
    }
  })()

  return {
    async stop({ waits } = {}) {
      stopped = true
      clearInterval(poll)
      await messages.close().catch(() => undefined)
      const handled = Promise.allSettled([...inflight]).then(() => loop.catch(() => undefined))
      if (waits === undefined) await handled
      else if (!(await waits.within(handled))) {
        // Given up on: no more heartbeats, so they come back after the ack wait, as a crash's do.
        clearInterval(heartbeat)
        opts.logger.warn(
          { consumer: opts.durable, messages: inflight.size },
          'messages still in hand at shutdown; left for redelivery after the ack wait',
        )
      }
      clearInterval(heartbeat)
    },
  }
}

/**
 * How often to say "still mine" within an ack wait of `ackWaitNanos`: a third of it (at least
 * 500 ms), so two heartbeats may be late or lost before it ends. For messages (`consume`) and for
 * anything leased for as long (the dispatcher's email claims, the leases of webhook deliveries and
 * broadcasts that LeaseKeeper renews).
 */
export function heartbeatEveryMs(ackWaitNanos: number): number {
  return Math.max(500, ackWaitNanos / 1_000_000 / 3)
}
