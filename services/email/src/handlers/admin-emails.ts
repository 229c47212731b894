import { projectResolver, routeHandler, serveRoutes } from '@mailer/bus'
import {
  AdminListEmailsQuery,
  type Caller,
  decodeCursor,
  fail,
  parseQuery,
  type SendResult,
  scannedPage,
} from '@mailer/contracts'
import type { EmailContext } from '../app.js'
import { toContentRecord, toEmailRecord, toSummaryRecord } from '../domain/records.js'
import { resendInput } from '../domain/resend.js'
import { EmailStore } from '../infra/email-store.js'
import { listProjects } from '../infra/projects.js'

/**
 * Admin email routes (interface.md "Admin routes", contract.md part 2): the list across
 * projects, any project's email and content in the project routes' shapes, and resend.
 */
export function serveAdminEmails(ctx: EmailContext): void {
  const { rt } = ctx
  const store = new EmailStore(rt.db, ctx.outbox, rt.env.LIST_SCAN_ROWS)
  const resolver = projectResolver(rt.bus)

  serveRoutes(rt.bus, 'email', {
    'api.email.emails.admin-list': async ({ query }) => {
      const q = parseQuery(AdminListEmailsQuery, query)
      const projectId = q.project ? (await resolver.resolve(q.project, 'project')).id : null
      const { rows, stop } = await store.list(projectId, q, decodeCursor(q.cursor, 'email'))
      return scannedPage(rows, q.limit, (e) => ({ ...toSummaryRecord(e), projectId: e.projectId }), stop)
    },

    'api.email.emails.admin-get': async ({ params }) => {
      const { email, events } = await store.get(null, params.id ?? '')
      return { ...toEmailRecord(email, email.recipients, events), projectId: email.projectId }
    },

    'api.email.emails.admin-content': async ({ params }) =>
      toContentRecord(await store.content(null, params.id ?? '')),

    // The new email goes through the whole send path of its project as the admin mirror's
    // caller (live, no API key, source `admin`): sender domain, suppression and limits apply.
    'api.email.emails.resend': async ({ caller, params }) => {
      const id = params.id ?? ''
      const content = await store.content(null, id)
      const { email } = await store.get(null, id)
      const project = (await listProjects(rt.bus, caller)).find((p) => p.id === email.projectId)
      if (!project) throw fail('project_not_found', `The project of ${id} no longer exists`, 'id')
      const { disabled: _d, createdAt: _c, updatedAt: _u, ...ref } = project
      const as: Caller = {
        requestId: caller.requestId,
        via: 'admin',
        project: ref,
        apiKeyId: null,
        mode: 'live',
      }
      const send = routeHandler(rt.bus, 'api.email.emails.send')
      const result = (await send({
        caller: as,
        params: {},
        query: {},
        body: resendInput(email, content),
        headers: {},
      })) as SendResult
      rt.logger.info({ requestId: caller.requestId, emailId: id, resentAs: result.id }, 'email resent')
      return result
    },
  })
}
