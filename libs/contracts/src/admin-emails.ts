import { z } from 'zod'
import { ADDRESS_RE, EmailRecord, EmailSummaryRecord, ListEmailsQuery } from './emails.js'
import { SLUG_RE } from './projects.js'

/** `GET /v1/admin/emails`: the project list's query, plus an optional project slug. */
export const AdminListEmailsQuery = ListEmailsQuery.extend({
  project: z.string().regex(SLUG_RE, 'project must be a project slug').optional(),
})
export type AdminListEmailsQuery = z.infer<typeof AdminListEmailsQuery>

/** An item of the admin email list: the project list's item plus the project it belongs to. */
export const AdminEmailSummaryRecord = EmailSummaryRecord.extend({ projectId: z.string() })
export type AdminEmailSummaryRecord = z.infer<typeof AdminEmailSummaryRecord>

/**
 * `GET /v1/admin/emails/:id`: the project route's email plus the project it belongs to, so that
 * whoever opened it by id alone (the dashboard's email page) can cancel or reschedule it through
 * that project's routes.
 */
export const AdminEmailRecord = EmailRecord.extend({ projectId: z.string() })
export type AdminEmailRecord = z.infer<typeof AdminEmailRecord>

const statusCounts = z.record(z.string(), z.number().int().min(0))

/** `GET /v1/admin/stats`: emails by status per project, since 00:00 UTC and over 7 and 30 days. */
export const ProjectStatsRecord = z.object({
  projectId: z.string(),
  slug: z.string(),
  name: z.string(),
  today: statusCounts,
  last7d: statusCounts,
  last30d: statusCounts,
})
export type ProjectStatsRecord = z.infer<typeof ProjectStatsRecord>

/** Event types the development route can fake: the delivery outcomes the dispatcher records. */
export const DEV_EVENT_TYPES = [
  'email.sent',
  'email.delivered',
  'email.deferred',
  'email.bounced',
  'email.complained',
  'email.rejected',
  'email.failed',
] as const
export type DevEventType = (typeof DEV_EVENT_TYPES)[number]

/** `POST /v1/admin/dev/events` (only with `DEV_ROUTES=true`). */
export const DevEventBody = z.strictObject({
  emailId: z.string().min(1).max(100),
  type: z.enum(DEV_EVENT_TYPES),
  /** One of the email's recipients; the first `to` address when left out. */
  recipient: z
    .string()
    .max(320)
    .transform((s) => s.trim().toLowerCase())
    .refine((s) => ADDRESS_RE.test(s), 'recipient must be an email address')
    .optional(),
})
export type DevEventBody = z.infer<typeof DevEventBody>
