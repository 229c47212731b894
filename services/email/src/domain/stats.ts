import type { ProjectStatsRecord } from '@mailer/contracts'

const DAY_MS = 86_400_000

/** Where each stats window starts: 00:00 UTC today, and 7 and 30 days (of 24 h) before now. */
export function statsWindows(now: Date): { today: Date; last7d: Date; last30d: Date } {
  const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()))
  return {
    today,
    last7d: new Date(now.getTime() - 7 * DAY_MS),
    last30d: new Date(now.getTime() - 30 * DAY_MS),
  }
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
