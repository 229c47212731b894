import { consume, ensureConsumer, ensureStream, type RunningConsumer } from '@mailer/bus'
import { CONSUMERS, STREAMS, TrackingHit } from '@mailer/contracts'
import { isDatabaseUnavailable, pingDb } from '@mailer/db'
import type { JsMsg } from 'nats'
import type { EmailContext } from '../app.js'
import { type HitOutcome, TrackingStore } from '../infra/tracking-store.js'

/**
 * Hits written at once by one replica. Each is a short transaction on the service's Prisma pool
 * (10 connections), which the API's reads share: a backlog drained after an outage leaves them room.
 */
const CONCURRENCY = 4
/** A hit that failed on its own, with the database up, this many times is terminated and logged. */
const MAX_DELIVERIES = 10

/** Redelivery delay after a failure: 1 s, 2 s, 4 s … capped at 60 s. */
const retryDelayMs = (msg: JsMsg): number =>
  Math.min(60_000, 1_000 * 2 ** Math.min(6, Math.max(0, msg.info.redeliveryCount - 1)))

/**
 * Opens and clicks from the gateway's public tracking links, consumed from the TRACKING stream
 * (durable consumer `email-tracking`): hits wait there while no email replica runs. Each hit is
 * recorded in one transaction (the email, its timeline event, the outbox row that announces it)
 * and acked after the commit. The token was verified at the gateway; an email that no longer
 * exists records nothing. A payload that is not a hit is terminated; a failed write comes back
 * with back-off, for as long as the database is away, and at most MAX_DELIVERIES times otherwise,
 * so one bad hit never holds up the others.
 */
export async function startTracking(ctx: EmailContext): Promise<RunningConsumer> {
  const { rt } = ctx
  const store = new TrackingStore(rt.db, ctx.outbox)
  const recorded = rt.metrics.counter('tracking_events_total', 'Opens and clicks recorded as events', [
    'type',
  ])
  const handled = rt.metrics.counter(
    'tracking_hits_total',
    'Hits taken from the TRACKING stream: recorded, unchanged (a repeat open, a hit recorded before, an email gone), invalid (terminated)',
    ['kind', 'outcome'],
  )
  const failures = rt.metrics.counter(
    'tracking_hit_failures_total',
    'Hits whose write failed (redelivered later, or terminated after repeated failures)',
    ['kind'],
  )

  async function giveBack(msg: JsMsg, hit: TrackingHit, err: unknown): Promise<void> {
    failures.inc({ kind: hit.kind })
    const log = { err, hitId: hit.id, emailId: hit.emailId, seq: msg.seq }
    if (isDatabaseUnavailable(err) || !(await pingDb(rt.db))) {
      // The database is away: every hit comes back later, none is given up on.
      rt.logger.warn(log, 'tracking hit not recorded, database unreachable; redelivering')
      msg.nak(retryDelayMs(msg))
    } else if (msg.info.redeliveryCount >= MAX_DELIVERIES) {
      rt.logger.error(log, 'tracking hit keeps failing; terminated')
      handled.inc({ kind: hit.kind, outcome: 'invalid' })
      msg.term()
    } else {
      rt.logger.warn(log, 'tracking hit not recorded; redelivering')
      msg.nak(retryDelayMs(msg))
    }
  }

  await ensureStream(rt.bus, STREAMS.TRACKING)
  await ensureConsumer(rt.bus, STREAMS.TRACKING.name, CONSUMERS.emailTracking)
  return consume(rt.bus, {
    stream: STREAMS.TRACKING.name,
    durable: CONSUMERS.emailTracking,
    concurrency: CONCURRENCY,
    logger: rt.logger,
    metrics: rt.metrics,
    handle: async (msg) => {
      const parsed = TrackingHit.safeParse(safeJson(msg))
      if (!parsed.success) {
        rt.logger.error(
          { subject: msg.subject, seq: msg.seq, reason: parsed.error.issues[0]?.message },
          'malformed tracking hit terminated',
        )
        handled.inc({ kind: 'unknown', outcome: 'invalid' })
        msg.term()
        return
      }
      const hit = parsed.data
      let outcome: HitOutcome
      try {
        outcome = await store.record(hit)
      } catch (err) {
        await giveBack(msg, hit, err)
        return
      }
      msg.ack()
      handled.inc({ kind: hit.kind, outcome: outcome.outcome })
      if (outcome.outcome === 'recorded') {
        ctx.publish(outcome.rows)
        recorded.inc({ type: hit.kind === 'open' ? 'email.opened' : 'email.clicked' })
      }
    },
  })
}

function safeJson(msg: JsMsg): unknown {
  try {
    return msg.json()
  } catch {
    return undefined
  }
}
