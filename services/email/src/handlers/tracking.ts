import {
  closeWithin,
  consume,
  ensureConsumer,
  ensureStream,
  type RunningConsumer,
  redeliveryDelayMs,
  secondsToNanos,
} from '@mailer/bus'
import { CONSUMERS, STREAMS, TrackingHit } from '@mailer/contracts'
import { createPgPool, GroupCommit, isDatabaseUnavailable } from '@mailer/db'
import type { Metrics } from '@mailer/observability'
import type { JsMsg } from 'nats'
import type { EmailContext } from '../app.js'
import { type HitOutcome, TrackingStore } from '../infra/tracking-store.js'

/** Hits written in one transaction, at most. */
const MAX_BATCH = 200
/**
 * Hits handled at once by one replica: a full group waits while the previous one is written, so
 * a backlog goes by in groups of MAX_BATCH. A hit in hand is only a message waiting for its write.
 */
const CONCURRENCY = 2 * MAX_BATCH
/** A hit that failed on its own, with the database up, this many times is terminated and logged. */
const MAX_DELIVERIES = 10

/** A hit's write: what it recorded, or `away` when the database was (nothing written, all come back). */
type Written = HitOutcome | { outcome: 'away' }
const AWAY: Written = { outcome: 'away' }

function trackingMetrics(metrics: Metrics) {
  return {
    recorded: metrics.counter('tracking_events_total', 'Opens and clicks recorded as events', ['type']),
    handled: metrics.counter(
      'tracking_hits_total',
      'Hits taken from the TRACKING stream: recorded, unchanged (a repeat open, a hit recorded before, an email gone), invalid (terminated)',
      ['kind', 'outcome'],
    ),
    failures: metrics.counter(
      'tracking_hit_failures_total',
      'Hits whose write failed (redelivered later, or terminated after repeated failures)',
      ['kind'],
    ),
    batchSize: metrics.histogram(
      'tracking_batch_size',
      'Hits per write transaction (a backlog goes in groups; a failed group is written again hit by hit)',
      [],
      [1, 5, 10, 25, 50, 100, 200],
    ),
    batchFailures: metrics.counter(
      'tracking_batch_failures_total',
      'Groups of hits whose transaction failed with the database up (their hits written again one by one)',
    ),
  }
}

/**
 * Opens and clicks from the gateway's public tracking links, consumed from the TRACKING stream
 * (durable consumer `email-tracking`): hits wait there while no email replica runs. Hits that
 * arrive while a write is in flight are written together (GroupCommit, up to MAX_BATCH): one
 * transaction records them on their emails, their timeline events and the outbox rows that
 * announce them, and each is acked after the commit. An idle consumer writes a hit at once; a
 * backlog (a broadcast's opens, what piled up during an outage) costs one commit per group
 * instead of one per hit. The token was verified at the gateway; an email that no longer exists
 * records nothing. A payload that is not a hit is terminated. While the database is away every hit
 * comes back with back-off; a group that fails with the database up is written again hit by hit,
 * so one bad hit never holds up the others, and that hit is terminated after MAX_DELIVERIES.
 */
export async function startTracking(ctx: EmailContext): Promise<RunningConsumer> {
  const { rt } = ctx
  // Its own connections: one write at a time, the second for the hit-by-hit retries of a failed
  // group, and none taken from the Prisma pool the API's reads use.
  const pool = createPgPool(rt.env.DATABASE_URL, { max: 2, queryTimeoutMs: rt.env.DATABASE_QUERY_TIMEOUT_MS })
  const store = new TrackingStore(pool)
  const m = trackingMetrics(rt.metrics)

  async function write(hits: TrackingHit[]): Promise<Written[]> {
    m.batchSize.observe(hits.length)
    try {
      return await store.recordMany(hits)
    } catch (err) {
      if (isDatabaseUnavailable(err) || !(await rt.checkDb())) {
        // Each hit would fail the same way: all come back later, none is given up on.
        rt.logger.warn(
          { err, hits: hits.length },
          'tracking hits not recorded, database unreachable; redelivering',
        )
        return hits.map(() => AWAY)
      }
      if (hits.length > 1) {
        m.batchFailures.inc()
        rt.logger.warn(
          { err, hits: hits.length },
          'tracking hits not recorded together; writing them one by one',
        )
      }
      // GroupCommit writes a group's hits again one by one; a single hit's failure is its own.
      throw err
    }
  }
  const writer = new GroupCommit(write, { slots: 1, maxItems: MAX_BATCH })

  /** A hit whose write failed on its own (the database answering): later, or never after MAX_DELIVERIES. */
  function giveBack(msg: JsMsg, hit: TrackingHit, err: unknown): void {
    m.failures.inc({ kind: hit.kind })
    const log = { err, requestId: hit.requestId, hitId: hit.id, emailId: hit.emailId, seq: msg.seq }
    if (msg.info.redeliveryCount >= MAX_DELIVERIES) {
      rt.logger.error(log, 'tracking hit keeps failing; terminated')
      m.handled.inc({ kind: hit.kind, outcome: 'invalid' })
      msg.term()
    } else {
      rt.logger.warn(log, 'tracking hit not recorded; redelivering')
      msg.nak(redeliveryDelayMs(msg))
    }
  }

  await ensureStream(rt.bus, STREAMS.TRACKING)
  await ensureConsumer(rt.bus, STREAMS.TRACKING.name, CONSUMERS.emailTracking, {
    ack_wait: secondsToNanos(rt.env.TRACKING_ACK_WAIT_SECONDS),
  })
  const running = await consume(rt.bus, {
    stream: STREAMS.TRACKING.name,
    durable: CONSUMERS.emailTracking,
    concurrency: CONCURRENCY,
    // One group pulled ahead: the rest of a backlog stays on the server for the other replicas.
    prefetch: MAX_BATCH,
    logger: rt.logger,
    metrics: rt.metrics,
    handle: async (msg) => {
      const parsed = TrackingHit.safeParse(safeJson(msg))
      if (!parsed.success) {
        rt.logger.error(
          { subject: msg.subject, seq: msg.seq, reason: parsed.error.issues[0]?.message },
          'malformed tracking hit terminated',
        )
        m.handled.inc({ kind: 'unknown', outcome: 'invalid' })
        msg.term()
        return
      }
      const hit = parsed.data
      let written: Written
      try {
        written = await writer.submit(hit)
      } catch (err) {
        giveBack(msg, hit, err)
        return
      }
      if (written.outcome === 'away') {
        m.failures.inc({ kind: hit.kind })
        msg.nak(redeliveryDelayMs(msg))
        return
      }
      msg.ack()
      m.handled.inc({ kind: hit.kind, outcome: written.outcome })
      if (written.outcome === 'recorded') {
        ctx.publish(written.rows)
        m.recorded.inc({ type: hit.kind === 'open' ? 'email.opened' : 'email.clicked' })
      }
    },
  })
  return {
    async stop() {
      // Every hit in hand is written (or given back) before the pool closes.
      await running.stop()
      await closeWithin('email tracking pg pool', () => pool.end(), rt.logger, rt.dbWaits)
    },
  }
}

function safeJson(msg: JsMsg): unknown {
  try {
    return msg.json()
  } catch {
    return undefined
  }
}
