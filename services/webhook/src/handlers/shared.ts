import type { Bus } from '@mailer/bus'
import { fail, noSuch } from '@mailer/contracts'
import type { Db } from '@mailer/db'
import type { DeliveryCleanup } from '../infra/delivery-cleanup.js'
import type { DeliveryStore } from '../infra/delivery-store.js'
import type { DeliveryWorker } from '../infra/delivery-worker.js'
import type { Invalidate } from './invalidate.js'

/** What the webhook route handlers share. */
export interface WebhookDeps {
  bus: Bus
  db: Db
  store: DeliveryStore
  cleanup: DeliveryCleanup
  worker: DeliveryWorker
  invalidate: Invalidate
  allowPrivate: boolean
  queue: string
}

/** The webhook if it belongs to the project; another project's webhook is indistinguishable from none. */
export async function findWebhook(db: Db, projectId: string, id: string | undefined) {
  const w = id ? await db.webhook.findFirst({ where: { id, projectId } }) : null
  if (!w) throw fail('webhook_not_found', noSuch('webhook', 'id', id, 'webhook'), 'id')
  return w
}

/**
 * A write to a webhook that a concurrent DELETE removed after it was read: 404, as if the lookup
 * had come later, instead of Prisma's "record not found" (P2025) as a 500.
 */
export async function whileItExists<T>(id: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write()
  } catch (err) {
    if ((err as { code?: unknown }).code === 'P2025')
      throw fail('webhook_not_found', noSuch('webhook', 'id', id, 'webhook'), 'id')
    throw err
  }
}
