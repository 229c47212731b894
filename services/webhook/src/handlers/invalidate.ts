import type { Bus } from '@mailer/bus'
import { SUBJECTS, WebhookInvalidation } from '@mailer/contracts'
import type { WebhookCache } from '../infra/webhook-cache.js'

export type Invalidate = (projectId: string) => Promise<void>

/**
 * What else holds a project's webhooks as they were: deliveries claimed ahead (DeliveryWorker);
 * without a project, every project's. Never throws.
 */
export type OnChange = (projectId?: string) => Promise<void>

/**
 * Every replica drops a project's cached webhook list, and hands back the deliveries it claimed
 * ahead for it, when another replica broadcasts a change. Broadcasts sent while this replica's
 * connection was down never reach it: after a reconnect every cached list is dropped (else a
 * webhook created meanwhile got none of the events fanned out here until the list's TTL ran out)
 * and every delivery claimed ahead is handed back (else it went out with the webhook as it was:
 * a secret rotated meanwhile, an old URL).
 */
export function followWebhookChanges(bus: Bus, cache: WebhookCache, onChange: OnChange): void {
  bus.subscribeInvalidations(SUBJECTS.webhookInvalidate, {
    onMessage: (payload) => {
      const { projectId } = WebhookInvalidation.parse(payload)
      cache.invalidate(projectId)
      void onChange(projectId)
    },
    onMissed: () => {
      cache.clear()
      void onChange()
    },
  })
}

/**
 * Applies a change here at once and broadcasts it, flushed before the change is acknowledged, so
 * the next event any replica handles after our reply sees the new list.
 */
export function makeInvalidate(bus: Bus, cache: WebhookCache, onChange: OnChange): Invalidate {
  return async (projectId) => {
    cache.invalidate(projectId)
    await onChange(projectId)
    bus.publish(SUBJECTS.webhookInvalidate, { projectId } satisfies WebhookInvalidation)
    await bus.flush()
  }
}
