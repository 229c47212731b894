import { every, type Loop } from '@mailer/observability'
import type { EmailContext } from '../app.js'

const PURGE_BATCH = 1_000

/**
 * Background upkeep: the queue gauges (a cheap count every 10 s), and every minute the content
 * past its retention and the send counters past their windows are deleted, in small batches.
 */
export function startHousekeeping(ctx: EmailContext): Loop {
  const { rt, metrics } = ctx
  const purged = rt.metrics.counter(
    'content_purged_total',
    'Email contents deleted after CONTENT_RETENTION_DAYS',
  )

  // The oldest wait counts from when an email became due (queued, its retry released, or its
  // retry time passed) and leaves out emails waiting for a retry time still ahead: measured from
  // the first queueing, one email retrying with backoff for an hour (a greylisting recipient, a
  // relay's quota) raised MailerSendQueueStalled, an alert for a dispatcher that stopped taking work.
  const gauges = every(10_000, 'queue gauges', rt.logger, async () => {
    const [row] = await rt.db.$queryRawUnsafe<Array<{ depth: number; oldest: number }>>(
      `SELECT count(*)::int AS depth,
              COALESCE(EXTRACT(EPOCH FROM now() - min(
                GREATEST(COALESCE(queued_at, created_at), released_at, next_attempt_at)
              ) FILTER (WHERE next_attempt_at IS NULL OR next_attempt_at <= now())), 0)::float8 AS oldest
       FROM emails WHERE status IN ('queued', 'deferred')`,
    )
    metrics.queueDepth.set(row?.depth ?? 0)
    metrics.queueOldestSeconds.set(row?.oldest ?? 0)
    // A hung database holds this loop: the timestamps fall behind and say the values are old.
    rt.metrics.markRead('queue_depth')
    rt.metrics.markRead('queue_oldest_seconds')
  })

  const purge = every(60_000, 'retention purge', rt.logger, async () => {
    for (;;) {
      const n = await rt.db.$executeRawUnsafe(
        // SKIP LOCKED: never waits for rows the email pruner's cascade holds, so the two never
        // deadlock (they would take the same contents in different orders).
        `DELETE FROM email_contents WHERE email_id IN (
           SELECT email_id FROM email_contents WHERE expires_at <= now() LIMIT ${PURGE_BATCH}
           FOR UPDATE SKIP LOCKED)`,
      )
      if (n > 0) purged.inc(n)
      if (n < PURGE_BATCH) break
    }
    await rt.db.$executeRawUnsafe('DELETE FROM send_counters WHERE expires_at <= now()')
  })

  return {
    async stop() {
      await Promise.all([gauges.stop(), purge.stop()])
    },
  }
}
