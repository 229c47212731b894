import { serveRoutes } from '@mailer/bus'
import {
  DeliveriesQuery,
  decodeCursor,
  fail,
  noSuch,
  page,
  parseQuery,
  requireProject,
} from '@mailer/contracts'
import { testEvent } from '../domain/payload.js'
import { toDeliveryRecord } from '../domain/records.js'
import { findWebhook, type WebhookDeps } from './shared.js'

/** Delivery log, the test event and manual retry. */
export function serveDeliveries(deps: WebhookDeps): void {
  const { db, store, worker } = deps

  serveRoutes(deps.bus, deps.queue, {
    'api.webhook.deliveries.list': async ({ caller, params, query }) => {
      const project = requireProject(caller)
      const q = parseQuery(DeliveriesQuery, query)
      const w = await findWebhook(db, project.id, params.id)
      const cursor = decodeCursor(q.cursor, 'delivery')
      const rows = await db.webhookDelivery.findMany({
        where: {
          webhookId: w.id,
          ...(cursor
            ? {
                OR: [
                  { createdAt: { lt: cursor.createdAt } },
                  { createdAt: cursor.createdAt, id: { lt: cursor.id } },
                ],
              }
            : {}),
        },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: q.limit + 1,
      })
      return page(rows, q.limit, toDeliveryRecord)
    },

    'api.webhook.webhooks.test': async ({ caller, params }) => {
      const project = requireProject(caller)
      const w = await findWebhook(db, project.id, params.id)
      if (!w.enabled)
        throw fail('webhook_disabled', 'The webhook is disabled; enable it before sending a test event')
      // Delivered to this webhook whatever its event filter.
      const deliveryId = await store.insertOne(w.id, project.id, testEvent())
      worker.kick()
      return { deliveryId }
    },

    'api.webhook.deliveries.retry': async ({ caller, params }) => {
      const project = requireProject(caller)
      const w = await findWebhook(db, project.id, params.id)
      if (!w.enabled)
        throw fail('webhook_disabled', 'The webhook is disabled; enable it before retrying a delivery')
      const d = await store.retryNow(params.deliveryId ?? '', w.id)
      if (!d)
        throw fail(
          'delivery_not_found',
          `${noSuch('delivery', 'id', params.deliveryId, 'delivery')} for this webhook`,
          'deliveryId',
        )
      worker.kick()
      return toDeliveryRecord(d)
    },
  })
}
