import type { Db } from '@mailer/db'
import type { StatusCounts } from '../domain/stats.js'

/**
 * Emails by project and status in the three stats windows: one grouped scan of the last 30
 * days (the `created_at` index keeps it to those rows).
 */
export function countByStatus(
  db: Db,
  w: { today: Date; last7d: Date; last30d: Date },
): Promise<StatusCounts[]> {
  return db.$queryRaw<StatusCounts[]>`
    SELECT project_id AS "projectId", status,
      (count(*) FILTER (WHERE created_at >= ${w.today}))::int AS today,
      (count(*) FILTER (WHERE created_at >= ${w.last7d}))::int AS "last7d",
      count(*)::int AS "last30d"
    FROM emails
    WHERE created_at >= ${w.last30d}
    GROUP BY project_id, status`
}
