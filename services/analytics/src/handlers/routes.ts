import { type Bus, serveRoutes } from '@mailer/bus'
import {
  AdminAnalyticsQuery,
  type AnalyticsInterval,
  AnalyticsQuery,
  type AnalyticsRange,
  type AnalyticsResponse,
  fail,
  isMailerError,
  parseQuery,
  ResolveProjectResponse,
  requireProject,
  SUBJECTS,
} from '@mailer/contracts'
import { buildReport } from '../domain/report.js'
import { windowOf } from '../domain/time-buckets.js'
import type { AggregateStore } from '../infra/aggregate-store.js'

/** Reads one project's (or, with `null`, every project's) analytics from the aggregates only. */
export async function report(
  store: AggregateStore,
  projectId: string | null,
  q: { range: AnalyticsRange; interval: AnalyticsInterval },
  now = new Date(),
): Promise<AnalyticsResponse> {
  const window = windowOf(q.range, q.interval, now)
  const [rows, hist, topTags, topBouncedDomains] = await Promise.all([
    store.buckets(projectId, q.interval, window.from, window.to),
    store.histogram(projectId, q.interval, window.from, window.to),
    store.top(projectId, 'tag', window.fromDay, window.toDay),
    store.top(projectId, 'bounced_domain', window.fromDay, window.toDay),
  ])
  return buildReport({ range: q.range, interval: q.interval, window, rows, hist, topTags, topBouncedDomains })
}

async function resolveProjectId(bus: Bus, slug: string): Promise<string> {
  try {
    const p = await bus.request(SUBJECTS.authResolveProject, { slug }, { schema: ResolveProjectResponse })
    return p.id
  } catch (err) {
    // Same error, but naming the query parameter the caller used.
    if (isMailerError(err) && err.code === 'project_not_found')
      throw fail('project_not_found', err.message, 'project')
    throw err
  }
}

/** `GET /v1/analytics` (and its admin mirror) and `GET /v1/admin/analytics`. */
export function serveAnalyticsRoutes(bus: Bus, store: AggregateStore, queue: string): void {
  serveRoutes(bus, queue, {
    'api.analytics.get': async ({ caller, query }) => {
      const q = parseQuery(AnalyticsQuery, query)
      return report(store, requireProject(caller).id, q)
    },
    'api.analytics.admin': async ({ query }) => {
      const q = parseQuery(AdminAnalyticsQuery, query)
      const projectId = q.project ? await resolveProjectId(bus, q.project) : null
      return report(store, projectId, q)
    },
  })
}
