import type { ProjectStatsRecord } from '@mailer/contracts'

const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000

/** The start of the UTC hour `t` falls in. */
export function hourOf(t: Date): Date {
  return new Date(Math.floor(t.getTime() / HOUR_MS) * HOUR_MS)
}

/**
 * Where each stats window starts: 00:00 UTC today, and the start of the hour 7 and 30 days (of
 * 24 h) before now. At the hour, because the counts are kept by hour (email_status_hours): a
 * window holds the whole hour it starts in.
 */
export function statsWindows(now: Date): { today: Date; last7d: Date; last30d: Date } {
  const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()))
  return {
    today,
    last7d: hourOf(new Date(now.getTime() - 7 * DAY_MS)),
    last30d: hourOf(new Date(now.getTime() - 30 * DAY_MS)),
  }
}

/** The hours the refresher keeps: 31 days, those of the 30-day window and a day for clocks. */
export const ROLLUP_HOURS = 31 * 24

/** A run of whole hours, `from` the first one's start: what one refresh statement recomputes. */
export interface HourRange {
  from: Date
  hours: number
}

/** The current hour and the one before: emails are still being created in them. */
export function recentHours(now: Date): HourRange {
  return { from: new Date(hourOf(now).getTime() - HOUR_MS), hours: 2 }
}

/**
 * The older hours the windows hold (ROLLUP_HOURS back, but the two recentHours), in runs of
 * `chunk` hours, newest first: a first pass fills today's and the last 7 days' counts before the
 * oldest. A run is one statement, its work bounded by the emails of `chunk` hours.
 */
export function olderHours(now: Date, chunk: number): HourRange[] {
  const end = recentHours(now).from.getTime()
  const start = hourOf(now).getTime() - (ROLLUP_HOURS - 1) * HOUR_MS
  const out: HourRange[] = []
  for (let to = end; to > start; to -= chunk * HOUR_MS) {
    const from = Math.max(start, to - chunk * HOUR_MS)
    out.push({ from: new Date(from), hours: (to - from) / HOUR_MS })
  }
  return out
}

/** One row of the grouped count: a project's emails of one status in each window. */
export interface StatusCounts {
  projectId: string
  status: string
  today: number
  last7d: number
  last30d: number
}

/**
 * Every project, in the order given, with its status → count maps (empty when it sent nothing);
 * a status appears in a window only when that window has some.
 */
export function buildStats(
  projects: Array<{ id: string; slug: string; name: string }>,
  counts: StatusCounts[],
): ProjectStatsRecord[] {
  const byProject = new Map<string, StatusCounts[]>()
  for (const c of counts) byProject.set(c.projectId, [...(byProject.get(c.projectId) ?? []), c])
  return projects.map((p) => {
    const out: ProjectStatsRecord = {
      projectId: p.id,
      slug: p.slug,
      name: p.name,
      today: {},
      last7d: {},
      last30d: {},
    }
    for (const c of byProject.get(p.id) ?? []) {
      if (c.today > 0) out.today[c.status] = c.today
      if (c.last7d > 0) out.last7d[c.status] = c.last7d
      if (c.last30d > 0) out.last30d[c.status] = c.last30d
    }
    return out
  })
}
