import { serveRoutes } from '@mailer/bus'
import {
  decodeCursor,
  fail,
  ListEmailsQuery,
  parseBody,
  parseQuery,
  RescheduleBody,
  requireProject,
  scannedPage,
} from '@mailer/contracts'
import type { EmailContext } from '../app.js'
import { toContentRecord, toEmailRecord, toSummaryRecord } from '../domain/records.js'
import { checkSchedule } from '../domain/schedule.js'
import { EmailStore } from '../infra/email-store.js'

/** Reading, listing, canceling and rescheduling emails (contract.md part 3). */
export function serveEmails(ctx: EmailContext): void {
  const { rt } = ctx
  const store = new EmailStore(rt.db, ctx.outbox, rt.env.LIST_SCAN_ROWS)

  const record = async (projectId: string, id: string) => {
    const { email, events } = await store.get(projectId, id)
    return toEmailRecord(email, email.recipients, events)
  }

  serveRoutes(rt.bus, 'email', {
    'api.email.emails.list': async ({ caller, query }) => {
      const project = requireProject(caller)
      const q = parseQuery(ListEmailsQuery, query)
      const after = decodeCursor(q.cursor, 'email')
      const { rows, stop } = await store.list(project.id, q, after)
      return scannedPage(rows, q.limit, toSummaryRecord, stop)
    },

    'api.email.emails.get': async ({ caller, params }) => record(requireProject(caller).id, params.id ?? ''),

    'api.email.emails.content': async ({ caller, params }) =>
      toContentRecord(await store.content(requireProject(caller).id, params.id ?? '')),

    'api.email.emails.cancel': async ({ caller, params }) => {
      const id = params.id ?? ''
      const rows = await store.cancel(requireProject(caller).id, id)
      ctx.publish(rows)
      rt.logger.info({ requestId: caller.requestId, emailId: id }, 'email canceled')
      return { id, status: 'canceled' as const }
    },

    'api.email.emails.reschedule': async ({ caller, params, body }) => {
      const project = requireProject(caller)
      const input = parseBody(RescheduleBody, body)
      const at = checkSchedule(input.scheduledAt, new Date())
      if (!at) throw fail('invalid_schedule', 'scheduledAt is required', 'scheduledAt')
      const id = params.id ?? ''
      ctx.publish(await store.reschedule(project.id, id, at, rt.env.CONTENT_RETENTION_DAYS))
      return record(project.id, id)
    },
  })
}
