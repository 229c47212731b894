import { AdminAnalyticsQuery, AnalyticsQuery, AnalyticsResponse } from '../analytics.js'
import { route } from './define.js'

/** Routes owned by the analytics service (contract.md part 5). */
export const analyticsRoutes = [
  route({
    method: 'GET',
    path: '/v1/analytics',
    subject: 'api.analytics.get',
    auth: 'project',
    mirror: true,
    summary: "The project's sending analytics over a range, from hourly/daily aggregates",
    query: AnalyticsQuery,
    response: AnalyticsResponse,
  }),
  route({
    method: 'GET',
    path: '/v1/admin/analytics',
    subject: 'api.analytics.admin',
    auth: 'admin',
    summary: 'Analytics of one project (?project=<slug>) or of all projects summed',
    query: AdminAnalyticsQuery,
    response: AnalyticsResponse,
  }),
]
