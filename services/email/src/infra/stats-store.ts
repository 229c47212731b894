import type { Db } from '@mailer/db'
import type { StatusCounts } from '../domain/stats.js'

/**
 * Emails by project and status in the three stats windows: one grouped scan of the last 30
 * days (the `created_at` index keeps it to those rows), plus the emails EMAIL_RETENTION_DAYS has
 * deleted since, which the pruner tallied by creation time in `pruned_email_tallies` (keyed by
 * it): without them a retention under 30 days made the windows shrink to the retention.
 */
export function countByStatus(
  db: Db,
  w: { today: Date; last7d: Date; last30d: Date },
): Promise<StatusCounts[]> {
  return db.$queryRaw<StatusCounts[]>`
    SELECT project_id AS "projectId", status,
      coalesce(sum(n) FILTER (WHERE created_at >= ${w.today}), 0)::int AS today,
      coalesce(sum(n) FILTER (WHERE created_at >= ${w.last7d}), 0)::int AS "last7d",
      sum(n)::int AS "last30d"
    FROM (
      SELECT project_id, status, created_at, 1 AS n FROM emails WHERE created_at >= ${w.last30d}
      UNION ALL
      SELECT project_id, status, created_at, count AS n FROM pruned_email_tallies
      WHERE created_at >= ${w.last30d}
    ) kept_and_pruned
    GROUP BY project_id, status`
}
