import type { Db } from '@mailer/db'
import { every, type Loop } from '@mailer/observability'
import type { EmailContext } from '../app.js'
import { UNSETTLED_STATUSES } from '../domain/retention.js'

/**
 * Deletes at most `chunk` emails accepted more than `days` ago that have settled (any status but
 * UNSETTLED_STATUSES), oldest first through the (created_at, id) index, with their events;
 * recipients and contents go by their foreign keys' cascade. A broadcast's deleted emails are
 * added to `pruned_email_counts` in the same statement, so its counts never drop. Rows another
 * transaction holds (an open being recorded, a late bounce) are skipped, and the status is checked
 * again on the locked row. Replicas may run it at once: they take disjoint emails, and the counts'
 * upsert adds, in key order (no deadlock between two of them). Returns how many emails went.
 */
export async function pruneEmails(db: Db, days: number, chunk: number): Promise<number> {
  const rows = await db.$queryRawUnsafe<Array<{ n: number }>>(
    `WITH d AS (
       DELETE FROM emails WHERE id IN (
         SELECT id FROM emails
         WHERE created_at < now() - $1::int * interval '1 day' AND status <> ALL($2::text[])
         ORDER BY created_at, id LIMIT $3
         FOR UPDATE SKIP LOCKED)
       RETURNING id, broadcast_id, status
     ), e AS (
       DELETE FROM email_events WHERE email_id IN (SELECT id FROM d)
     ), c AS (
       INSERT INTO pruned_email_counts (broadcast_id, status, count)
       SELECT broadcast_id, status, count(*)::int FROM d WHERE broadcast_id IS NOT NULL
       GROUP BY broadcast_id, status ORDER BY broadcast_id, status
       ON CONFLICT (broadcast_id, status) DO UPDATE SET count = pruned_email_counts.count + excluded.count
     )
     SELECT count(*)::int AS n FROM d`,
    days,
    [...UNSETTLED_STATUSES],
    chunk,
  )
  return rows[0]?.n ?? 0
}

/**
 * EMAIL_RETENTION_DAYS (0: off): every EMAIL_PRUNE_INTERVAL_SECONDS, the settled emails past it
 * are deleted in chunks until none is left; the first run is one interval after start.
 */
export function startEmailPruner(ctx: EmailContext, chunk = 1_000): Loop | null {
  const { rt } = ctx
  const days = rt.env.EMAIL_RETENTION_DAYS
  if (days === 0) return null
  const pruned = rt.metrics.counter('pruned_total', 'Emails deleted after EMAIL_RETENTION_DAYS')
  let stopping = false
  const loop = every(rt.env.EMAIL_PRUNE_INTERVAL_SECONDS * 1000, 'email-prune', rt.logger, async () => {
    let total = 0
    for (let n = chunk; n === chunk && !stopping; ) {
      n = await pruneEmails(rt.db, days, chunk)
      total += n
      pruned.inc(n)
    }
    if (total > 0) rt.logger.info({ deleted: total, retentionDays: days }, 'pruned old emails')
  })
  return {
    async stop() {
      // A long pass ends after the statement in flight.
      stopping = true
      await loop.stop()
    },
  }
}
