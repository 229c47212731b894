import type { Db } from '@mailer/db'
import type { StatusCounts } from '../domain/stats.js'

/**
 * Emails by project and status in the three stats windows, from email_status_hours (the stats
 * refresher's counts by hour of creation, pruned emails included: infra/stats-rollup.ts): a range
 * of its primary key, a row per project, status and hour of the last 30 days, whatever the number
 * of emails. Not the emails themselves: reading them takes a second per million rows, past the
 * statement time-out at a million emails a day. The windows start at the hour
 * (statsWindows) and the counts are as of the last refresh.
 */
export function countByStatus(
  db: Db,
  w: { today: Date; last7d: Date; last30d: Date },
): Promise<StatusCounts[]> {
  // ISO strings, zone included: the driver sends a Date as UTC wall time without a zone.
  const [today, last7d, last30d] = [w.today, w.last7d, w.last30d].map((d) => d.toISOString())
  return db.$queryRaw<StatusCounts[]>`
    SELECT project_id AS "projectId", status,
      coalesce(sum(count) FILTER (WHERE hour >= ${today}::timestamptz), 0)::int AS today,
      coalesce(sum(count) FILTER (WHERE hour >= ${last7d}::timestamptz), 0)::int AS "last7d",
      sum(count)::int AS "last30d"
    FROM email_status_hours
    WHERE hour >= ${last30d}::timestamptz
    GROUP BY project_id, status`
}
