import type { Db } from '@mailer/db'
import { every, type Loop } from '@mailer/observability'
import type { EmailContext } from '../app.js'
import { UNSETTLED_STATUSES } from '../domain/retention.js'

/** How long a pruned email stays in `pruned_email_tallies`: the stats' 30 days, plus a day for clocks. */
const TALLY_DAYS = 31

/**
 * Deletes at most `chunk` emails that have settled (any status but UNSETTLED_STATUSES) and were
 * accepted, and are or were due, more than `days` ago, oldest first through the (created_at, id)
 * index, then their events; recipients and contents go by their foreign keys' cascade. A
 * broadcast's deleted emails are added to `pruned_email_counts` by the deleting statement, so its
 * counts never drop; so are those created less than TALLY_DAYS ago to `pruned_email_tallies`, by
 * project, status and hour of creation, so `GET /v1/admin/stats` (its windows reach 30 days back,
 * by hour: infra/stats-rollup.ts) counts them whatever the retention. By hour, not by creation
 * time: keyed to the millisecond, the table would gain about a row per pruned email. Rows
 * another transaction holds (an open being recorded, a late bounce) are skipped, and the status
 * is checked again on the locked row. Returns how many emails went.
 *
 * Two statements in one transaction: the events' delete takes a snapshot after the emails are
 * gone, so it also sees an event committed by a writer that updated the email just before the
 * pruner locked it (one statement's snapshot, taken at its start, would miss that event and leave
 * it behind for good); a writer coming later blocks on the deleted row and then finds no email.
 * Replicas may run it at once: they take disjoint emails, and the counts' upsert adds, in key
 * order (no deadlock between two of them).
 */
export function pruneEmails(db: Db, days: number, chunk: number): Promise<number> {
  return db.$transaction(async (tx) => {
    const rows = await tx.$queryRawUnsafe<Array<{ ids: string[] }>>(
      `WITH d AS (
         DELETE FROM emails WHERE id IN (
           SELECT id FROM emails
           WHERE created_at < now() - $1::int * interval '1 day' AND status <> ALL($2::text[])
             AND (scheduled_at IS NULL OR scheduled_at < now() - $1::int * interval '1 day')
           ORDER BY created_at, id LIMIT $3
           FOR UPDATE SKIP LOCKED)
         RETURNING id, broadcast_id, project_id, status, created_at
       ), c AS (
         INSERT INTO pruned_email_counts (broadcast_id, status, count)
         SELECT broadcast_id, status, count(*)::int FROM d WHERE broadcast_id IS NOT NULL
         GROUP BY broadcast_id, status ORDER BY broadcast_id, status
         ON CONFLICT (broadcast_id, status) DO UPDATE SET count = pruned_email_counts.count + excluded.count
       ), t AS (
         INSERT INTO pruned_email_tallies (created_at, project_id, status, count)
         SELECT date_trunc('hour', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour,
           project_id, status, count(*)::int FROM d
         WHERE created_at >= now() - interval '${TALLY_DAYS} days'
         GROUP BY hour, project_id, status ORDER BY hour, project_id, status
         ON CONFLICT (created_at, project_id, status) DO UPDATE SET count = pruned_email_tallies.count + excluded.count
       )
       SELECT coalesce(array_agg(id), '{}') AS ids FROM d`,
      days,
      [...UNSETTLED_STATUSES],
      chunk,
    )
    // Tallies past every stats window: one range of the primary key, a few rows a pass.
    await tx.$executeRawUnsafe(
      `DELETE FROM pruned_email_tallies WHERE created_at < now() - interval '${TALLY_DAYS} days'`,
    )
    const ids = rows[0]?.ids ?? []
    if (ids.length > 0)
      await tx.$executeRawUnsafe('DELETE FROM email_events WHERE email_id = ANY($1::text[])', ids)
    return ids.length
  })
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
