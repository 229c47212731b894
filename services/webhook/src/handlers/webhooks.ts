import { serveRoutes } from '@mailer/bus'
import {
  CreateWebhookBody,
  fail,
  MAX_WEBHOOKS_PER_PROJECT,
  newId,
  parseBody,
  requireProject,
  UpdateWebhookBody,
} from '@mailer/contracts'
import { toWebhookRecord } from '../domain/records.js'
import { generateSecret } from '../domain/signature.js'
import { assertPublicUrl } from '../infra/url-guard.js'
import { findWebhook, type WebhookDeps, whileItExists } from './shared.js'

/** Webhook CRUD and secret rotation (contract.md part 4); every change invalidates the fan-out cache. */
export function serveWebhooks(deps: WebhookDeps): void {
  const { db, invalidate } = deps

  serveRoutes(deps.bus, deps.queue, {
    'api.webhook.webhooks.create': async ({ caller, body }) => {
      const project = requireProject(caller)
      const input = parseBody(CreateWebhookBody, body)
      await assertPublicUrl(input.url, deps.allowPrivate)
      const secret = generateSecret()
      const w = await db.$transaction(async (tx) => {
        // Creates of one project one at a time, so two racing for the last place cannot both count 99.
        await tx.$executeRawUnsafe(
          'SELECT pg_advisory_xact_lock(hashtext($1)::bigint)',
          `webhooks-create:${project.id}`,
        )
        if ((await tx.webhook.count({ where: { projectId: project.id } })) >= MAX_WEBHOOKS_PER_PROJECT)
          throw fail(
            'webhook_limit_reached',
            `A project can have at most ${MAX_WEBHOOKS_PER_PROJECT} webhooks; delete one first`,
          )
        return tx.webhook.create({
          data: {
            id: newId('webhook'),
            projectId: project.id,
            url: input.url,
            events: input.events,
            enabled: input.enabled,
            secret,
          },
        })
      })
      await invalidate(project.id)
      return { ...toWebhookRecord(w), secret }
    },

    'api.webhook.webhooks.list': async ({ caller }) => {
      const project = requireProject(caller)
      const rows = await db.webhook.findMany({
        where: { projectId: project.id },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      })
      return { data: rows.map(toWebhookRecord) }
    },

    'api.webhook.webhooks.get': async ({ caller, params }) => {
      const project = requireProject(caller)
      return toWebhookRecord(await findWebhook(db, project.id, params.id))
    },

    'api.webhook.webhooks.update': async ({ caller, params, body }) => {
      const project = requireProject(caller)
      const input = parseBody(UpdateWebhookBody, body)
      const current = await findWebhook(db, project.id, params.id)
      if (input.url !== undefined) await assertPublicUrl(input.url, deps.allowPrivate)
      const [w, disabledAt] = await whileItExists(current.id, () =>
        db.$transaction(async (tx) => {
          const row = await tx.webhook.update({ where: { id: current.id }, data: input })
          if (input.enabled !== false) return [row, null] as const
          // What was fanned out up to now is the disabling's to fail; a delivery fanned out while
          // this commits is the claim's, which ends any due delivery of a disabled webhook it finds.
          const [at] = await tx.$queryRawUnsafe<Array<{ at: string }>>('SELECT clock_timestamp()::text AS at')
          return [row, at!.at] as const
        }),
      )
      // At once, so that no replica starts a delivery it claimed ahead for the webhook as it was.
      await invalidate(project.id)
      // Disabled: no new deliveries, and every pending retry fails (interface.md part 3), in chunks
      // once the change has committed (DeliveryCleanup). One falling due meanwhile is ended by the
      // claim that finds it, no attempt counted (delivery-claim-sql.ts).
      if (disabledAt) await deps.cleanup.afterDisable(current.id, disabledAt)
      return toWebhookRecord(w)
    },

    'api.webhook.webhooks.delete': async ({ caller, params }) => {
      const project = requireProject(caller)
      const current = await findWebhook(db, project.id, params.id)
      await whileItExists(current.id, () => db.webhook.delete({ where: { id: current.id } }))
      await invalidate(project.id)
      // Its deliveries go too, in chunks once the webhook is gone (DeliveryCleanup).
      await deps.cleanup.afterDelete(current.id, project.id)
      return { id: current.id, deleted: true as const }
    },

    'api.webhook.webhooks.rotate-secret': async ({ caller, params }) => {
      const project = requireProject(caller)
      const current = await findWebhook(db, project.id, params.id)
      const secret = generateSecret()
      // Attempts are signed at send time with the current secret: the old one stops at once.
      const w = await whileItExists(current.id, () =>
        db.webhook.update({ where: { id: current.id }, data: { secret } }),
      )
      await invalidate(project.id)
      return { ...toWebhookRecord(w), secret }
    },
  })
}
