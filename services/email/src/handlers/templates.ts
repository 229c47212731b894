import { serveRoutes } from '@mailer/bus'
import {
  CreateTemplateBody,
  decodeCursor,
  fail,
  ListTemplatesQuery,
  noSuch,
  page,
  parseBody,
  parseOptionalBody,
  parseQuery,
  RenderTemplateBody,
  RestoreTemplateBody,
  requireProject,
  SUBJECTS,
  TEMPLATE_NAME_RE,
  TemplatesInvalidation,
  TemplateVersionsQuery,
  UpdateTemplateBody,
} from '@mailer/contracts'
import type { Template } from '@mailer/db'
import { checkRequired, checkTemplateSyntax, compileTemplate, exampleData } from '@mailer/templating'
import type { EmailContext } from '../app.js'
import { checkSize } from '../domain/attachments.js'
import { checkPreviewReply, fittingCount, replyRoom } from '../domain/reply-size.js'
import {
  applyPatch,
  decodeVersionCursor,
  encodeVersionCursor,
  storedVariables,
  type TemplateContent,
  toTemplateRecord,
  toTemplateSummary,
  toVersionRecord,
} from '../domain/template-records.js'
import type { TemplateCache } from '../infra/template-renderer.js'
import { TemplateStore } from '../infra/template-store.js'

/** A `:name` that cannot exist is simply not found (no 400 for a path segment). */
function nameParam(params: Record<string, string>): string {
  const name = params.name ?? ''
  if (!TEMPLATE_NAME_RE.test(name))
    throw fail('template_not_found', noSuch('template', 'name', name, TEMPLATE_NAME_RE), 'name')
  return name
}

/**
 * Content that can be saved (created, changed or restored): parseable Handlebars in every part,
 * and html or text present.
 */
function checkContent(c: TemplateContent): TemplateContent {
  if (c.html === null && c.text === null) {
    throw fail('invalid_body', 'a template needs html or text; both would be empty', 'html')
  }
  checkTemplateSyntax(c)
  return c
}

/**
 * The template routes (contract.md part 5). Every change is a new version and drops the compiled
 * copy on every replica, so the next send renders the new version.
 */
export function serveTemplates(ctx: EmailContext, cache: TemplateCache): void {
  const { rt } = ctx
  const store = new TemplateStore(rt.db)
  const changes = rt.metrics.counter('template_changes_total', 'Templates created, changed or deleted', [
    'action',
  ])

  rt.bus.subscribeInvalidations(SUBJECTS.templatesInvalidate, {
    onMessage: (p) => {
      const { projectId, name } = TemplatesInvalidation.parse(p)
      cache.invalidate(projectId, name)
    },
    onMissed: () => cache.clear(),
  })
  const changed = async (t: Template, action: string, requestId: string) => {
    cache.invalidate(t.projectId, t.name)
    rt.bus.publish(SUBJECTS.templatesInvalidate, {
      projectId: t.projectId,
      name: t.name,
    } satisfies TemplatesInvalidation)
    // The invalidation reaches the server before the caller hears back and sends with it.
    await rt.bus.flush()
    changes.inc({ action })
    rt.logger.info({ requestId, template: t.name, version: t.version, action }, 'template changed')
  }

  serveRoutes(rt.bus, 'email', {
    'api.email.templates.create': async ({ caller, body }) => {
      const project = requireProject(caller)
      const input = parseBody(CreateTemplateBody, body)
      const content = checkContent({
        subject: input.subject ?? null,
        html: input.html ?? null,
        text: input.text ?? null,
        variables: input.variables,
      })
      const t = await store.create(project.id, input.name, content)
      await changed(t, 'created', caller.requestId)
      return toTemplateRecord(t)
    },

    'api.email.templates.list': async ({ caller, query }) => {
      const project = requireProject(caller)
      const { limit, cursor, q } = parseQuery(ListTemplatesQuery, query)
      const after = decodeCursor(cursor, 'template')
      const rows = await store.list(project.id, { limit, ...(q ? { q } : {}), ...(after ? { after } : {}) })
      return page(rows, limit, toTemplateSummary)
    },

    'api.email.templates.get': async ({ caller, params }) =>
      toTemplateRecord(await store.get(requireProject(caller).id, nameParam(params))),

    'api.email.templates.update': async ({ caller, params, body }) => {
      const project = requireProject(caller)
      const name = nameParam(params)
      const patch = parseBody(UpdateTemplateBody, body)
      const t = await store.update(
        project.id,
        name,
        (cur) => checkContent(applyPatch(cur, patch)),
        patch.version,
      )
      await changed(t, 'updated', caller.requestId)
      return toTemplateRecord(t)
    },

    'api.email.templates.delete': async ({ caller, params }) => {
      const t = await store.delete(requireProject(caller).id, nameParam(params))
      await changed(t, 'deleted', caller.requestId)
      return { id: t.id, name: t.name, deleted: true as const }
    },

    'api.email.templates.versions': async ({ caller, params, query }) => {
      const project = requireProject(caller)
      const name = nameParam(params)
      const { limit, cursor } = parseQuery(TemplateVersionsQuery, query)
      const before = decodeVersionCursor(cursor)
      // A page is cut to what one reply can carry (NATS max_payload); the cursor goes on from there.
      const room = replyRoom(rt.bus.maxPayload)
      const { rows, more } = await store.versions(project.id, name, {
        limit,
        maxBytes: room,
        ...(before !== undefined ? { before } : {}),
      })
      const records = rows.map(toVersionRecord)
      const data = records.slice(0, fittingCount(records, room))
      const last = data[data.length - 1]
      return {
        data,
        nextCursor: (more || data.length < records.length) && last ? encodeVersionCursor(last.version) : null,
      }
    },

    'api.email.templates.restore': async ({ caller, params, body }) => {
      const project = requireProject(caller)
      const { version } = parseBody(RestoreTemplateBody, body)
      const t = await store.restore(project.id, nameParam(params), version, checkContent)
      await changed(t, 'restored', caller.requestId)
      return toTemplateRecord(t)
    },

    // A preview: declared examples fill in what `data` leaves out; required variables still apply.
    'api.email.templates.render': async ({ caller, params, body }) => {
      const project = requireProject(caller)
      const { data } = parseOptionalBody(RenderTemplateBody, body)
      const t = await store.get(project.id, nameParam(params))
      const variables = storedVariables(t.variables)
      const merged = { ...exampleData(variables), ...(data ?? {}) }
      checkRequired(variables, merged)
      // Refused as a send of this content would be, and kept to what one reply can carry.
      const max = rt.env.MAX_MESSAGE_BYTES
      const preview = compileTemplate(t, { name: t.name }).render(merged, { maxBytes: max })
      checkSize(preview.html, preview.text, [], max)
      checkPreviewReply(preview, rt.bus.maxPayload)
      return preview
    },
  })
}
