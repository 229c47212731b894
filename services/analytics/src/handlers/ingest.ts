import {
  consume,
  decodeJson,
  ensureConsumer,
  ensureStream,
  type RunningConsumer,
  type Runtime,
  redeliveryDelayMs,
  secondsToNanos,
} from '@mailer/bus'
import { CONSUMERS, EVENT_TYPES, readEventsMessage, STREAMS } from '@mailer/contracts'
import type { Metrics } from '@mailer/observability'
import type { JsMsg } from 'nats'
import { classify, type Effect } from '../domain/event-effects.js'
import type { AnalyticsEnv } from '../env.js'
import type { AggregateStore } from '../infra/aggregate-store.js'
import { Batcher } from '../infra/batcher.js'

const KNOWN_TYPES: ReadonlySet<string> = new Set(EVENT_TYPES)
/** Metric label for an event type: one of the contract's types, or `other` (bounded). */
const typeLabel = (type: string): string => (KNOWN_TYPES.has(type) ? type : 'other')

function ingestMetrics(metrics: Metrics) {
  return {
    ingested: metrics.counter('events_ingested_total', 'Events consumed and acknowledged, by type', ['type']),
    duplicates: metrics.counter(
      'events_duplicate_total',
      'Events that changed nothing: redelivered, or already counted',
    ),
    invalid: metrics.counter(
      'events_invalid_total',
      'Messages terminated, and events left out of a group: not valid event messages',
    ),
    failures: metrics.counter(
      'ingest_batch_failures_total',
      'Batches whose transaction failed (redelivered)',
    ),
    seconds: metrics.histogram('ingest_batch_seconds', 'Time to write one batch of events'),
    size: metrics.histogram(
      'ingest_batch_size',
      'Messages per batch',
      [],
      [1, 5, 10, 25, 50, 100, 200, 500, 1000],
    ),
    lag: metrics.gauge('ingest_lag_seconds', 'Age of the newest event of the last batch when it was written'),
  }
}

/** One message: the types of its events (for the metrics) and what they count. */
interface Item {
  msg: JsMsg
  types: string[]
  effects: Effect[]
}

/**
 * A message that failed on its own, with the database up, this many times is terminated (and
 * logged) rather than retried forever.
 */
const MAX_DELIVERIES = 10

/**
 * Decodes and classifies one message (one event, or a group of them). Anything unreadable makes
 * it `invalid`; an event of a valid group that cannot be counted is left out on its own
 * (`rejected`), so the others still count.
 */
function read(msg: JsMsg): { item: Item; rejected: string[] } | { invalid: string } {
  let raw: unknown
  try {
    raw = decodeJson(msg.data)
  } catch {
    return { invalid: 'not JSON' }
  }
  const parsed = readEventsMessage(raw)
  if ('invalid' in parsed) return parsed
  const item: Item = { msg, types: [], effects: [] }
  const rejected = [...parsed.rejected]
  const single = parsed.events.length + parsed.rejected.length === 1
  for (const event of parsed.events) {
    const classified = classify(event)
    if (classified.kind === 'invalid') {
      // A single event is the message: it is terminated.
      if (single) return { invalid: classified.reason }
      rejected.push(classified.reason)
      continue
    }
    item.types.push(event.event.type)
    if (classified.kind === 'counted') item.effects.push(...classified.effects)
  }
  return { item, rejected }
}

/**
 * Consumes the EVENTS stream into the aggregates. Messages are batched (up to
 * ANALYTICS_BATCH_SIZE or ANALYTICS_BATCH_WAIT_MS) and each batch is one transaction; only then
 * are its messages acked. A message that is not a valid event is terminated. When a batch's
 * transaction fails, its events are written one by one, so that a single bad event cannot hold
 * back the others; the messages of those that still fail are redelivered with back-off (the
 * idempotency keys make every retry safe) and terminated after MAX_DELIVERIES attempts.
 */
export async function startIngest(
  rt: Runtime<AnalyticsEnv>,
  store: AggregateStore,
): Promise<RunningConsumer> {
  const { bus, env, logger } = rt
  const m = ingestMetrics(rt.metrics)

  /** Writes items' effects in one transaction, then acks them; throws if the transaction fails. */
  async function commit(items: Item[]): Promise<void> {
    const effects = items.flatMap((i) => i.effects)
    settle(items, effects, effects.length > 0 ? await store.apply(effects) : [])
  }

  /**
   * A group's events each in a transaction of their own, so that one that cannot be written does
   * not hold back the others (they are idempotent: a redelivery counts only what is missing).
   * Throws the last failure after trying them all.
   */
  async function commitOneByOne(item: Item): Promise<void> {
    const counted: Effect[] = []
    let failure: { err: unknown } | null = null
    for (const effect of item.effects) {
      try {
        counted.push(...(await store.apply([effect])))
      } catch (err) {
        failure = { err }
      }
    }
    if (failure) throw failure.err
    settle([item], item.effects, counted)
  }

  function settle(items: Item[], effects: Effect[], counted: Effect[]): void {
    for (const { msg, types } of items) {
      msg.ack()
      for (const type of types) m.ingested.inc({ type: typeLabel(type) })
    }
    const own = (list: Effect[]) => list.filter((e) => !e.derived).length
    m.duplicates.inc(own(effects) - own(counted))
    const newest = Math.max(0, ...effects.map((e) => e.at.getTime()))
    if (newest > 0) m.lag.set(Math.max(0, (Date.now() - newest) / 1000))
  }

  /** Redelivery later, or, for a message that keeps failing on its own, termination. */
  function giveBack(item: Item, err: unknown): void {
    if (item.msg.info.redeliveryCount >= MAX_DELIVERIES) {
      logger.error({ err, subject: item.msg.subject, seq: item.msg.seq }, 'event keeps failing; terminated')
      m.invalid.inc()
      item.msg.term()
    } else {
      item.msg.nak(redeliveryDelayMs(item.msg))
    }
  }

  async function flush(msgs: JsMsg[]): Promise<void> {
    const end = m.seconds.startTimer()
    m.size.observe(msgs.length)
    const items: Item[] = []
    for (const msg of msgs) {
      const r = read(msg)
      if ('invalid' in r) {
        m.invalid.inc()
        logger.warn(
          { subject: msg.subject, seq: msg.seq, reason: r.invalid },
          'invalid event message terminated',
        )
        msg.term()
        continue
      }
      if (r.rejected.length) {
        m.invalid.inc(r.rejected.length)
        logger.warn(
          { subject: msg.subject, seq: msg.seq, reasons: r.rejected },
          'invalid events left out of a group',
        )
      }
      items.push(r.item)
    }
    try {
      await commit(items)
    } catch (err) {
      m.failures.inc()
      if (!(await rt.checkDb())) {
        // The database is away: everything comes back later, nothing is given up on.
        logger.error(
          { err, messages: items.length },
          'analytics batch failed, database unreachable; redelivering',
        )
        for (const { msg } of items) msg.nak(redeliveryDelayMs(msg))
        return
      }
      logger.warn({ err, messages: items.length }, 'analytics batch failed; writing its messages one by one')
      // One bad event must not hold back the rest of its batch: write each on its own.
      for (const item of items) {
        try {
          await (item.effects.length > 1 ? commitOneByOne(item) : commit([item]))
        } catch (e) {
          giveBack(item, e)
        }
      }
    } finally {
      end()
    }
  }

  await ensureStream(bus, STREAMS.EVENTS)
  await ensureConsumer(bus, STREAMS.EVENTS.name, CONSUMERS.analyticsIngest, {
    max_ack_pending: Math.max(1_000, env.ANALYTICS_BATCH_SIZE * 4),
    ack_wait: secondsToNanos(env.ANALYTICS_ACK_WAIT_SECONDS),
  })
  const batcher = new Batcher<JsMsg>({
    maxSize: env.ANALYTICS_BATCH_SIZE,
    maxWaitMs: env.ANALYTICS_BATCH_WAIT_MS,
    flush,
  })
  const running = await consume(bus, {
    stream: STREAMS.EVENTS.name,
    durable: CONSUMERS.analyticsIngest,
    // Enough messages in hand to fill a batch while the previous one is being written.
    concurrency: env.ANALYTICS_BATCH_SIZE,
    logger,
    metrics: rt.metrics,
    handle: (msg) => batcher.add(msg),
  })
  return {
    async stop() {
      await running.stop()
      await batcher.drain()
    },
  }
}
