import {
  AdminEmailRecord,
  AdminEmailSummaryRecord,
  AdminListEmailsQuery,
  DevEventBody,
  ProjectStatsRecord,
} from '../admin-emails.js'
import { EmailContentRecord, SendResult } from '../emails.js'
import { EventPayload } from '../events.js'
import { route } from './define.js'

/** Admin email routes owned by the email service (interface.md "Admin routes", contract.md part 2). */
export const adminEmailRoutes = [
  route({
    method: 'GET',
    path: '/v1/admin/emails',
    subject: 'api.email.emails.admin-list',
    auth: 'admin',
    list: 'page',
    summary: 'List emails across projects, newest first ({ data, nextCursor }); ?project=<slug> for one',
    query: AdminListEmailsQuery,
    response: AdminEmailSummaryRecord,
  }),
  route({
    method: 'GET',
    path: '/v1/admin/emails/:id',
    subject: 'api.email.emails.admin-get',
    auth: 'admin',
    summary: 'Retrieve an email of any project (the shape of GET /v1/emails/:id plus projectId)',
    response: AdminEmailRecord,
  }),
  route({
    method: 'GET',
    path: '/v1/admin/emails/:id/content',
    subject: 'api.email.emails.admin-content',
    auth: 'admin',
    summary: 'Retrieve the stored content of an email of any project; 404 content_expired once gone',
    response: EmailContentRecord,
  }),
  route({
    method: 'POST',
    path: '/v1/admin/emails/:id/resend',
    subject: 'api.email.emails.resend',
    auth: 'admin',
    status: 202,
    summary:
      "Send a new email from the stored content, tagged resent_from; 404 content_expired once it's gone",
    response: SendResult,
  }),
  route({
    method: 'GET',
    path: '/v1/admin/stats',
    subject: 'api.email.stats',
    auth: 'admin',
    list: 'all',
    summary: 'Emails by status per project: today (UTC), last 7 days, last 30 days ({ data })',
    response: ProjectStatsRecord,
  }),
  route({
    method: 'POST',
    path: '/v1/admin/dev/events',
    subject: 'api.email.dev.events.create',
    auth: 'admin',
    status: 201,
    summary: 'Fake a delivery event for an email (only with DEV_ROUTES=true, else 404 route_not_found)',
    body: DevEventBody,
    response: EventPayload,
  }),
]
