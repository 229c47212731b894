import { AdminEventRecord, EventPayload } from '../events.js'
import { AdminEventsQuery, EventsQuery } from '../webhooks.js'
import { route } from './define.js'

/** The event log (served by the webhook service from `email_events`). */
export const eventRoutes = [
  route({
    method: 'GET',
    path: '/v1/events',
    subject: 'api.webhook.events.list',
    auth: 'project',
    mirror: true,
    summary: 'List events as webhooks receive them ({ data, nextCursor })',
    query: EventsQuery,
    response: EventPayload,
  }),
  route({
    method: 'GET',
    path: '/v1/admin/events',
    subject: 'api.webhook.events.admin-list',
    auth: 'admin',
    summary: 'List events of one project (?project=<slug>) or of all projects',
    query: AdminEventsQuery,
    response: AdminEventRecord,
  }),
]
