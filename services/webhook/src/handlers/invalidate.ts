import type { Bus } from '@mailer/bus'
import { SUBJECTS, WebhookInvalidation } from '@mailer/contracts'
import type { WebhookCache } from '../infra/webhook-cache.js'

export type Invalidate = (projectId: string) => Promise<void>

/** Every replica drops a project's cached webhook list when another replica broadcasts a change. */
export function subscribeInvalidations(bus: Bus, cache: WebhookCache): void {
  bus.subscribe(SUBJECTS.webhookInvalidate, (payload) =>
    cache.invalidate(WebhookInvalidation.parse(payload).projectId),
  )
}

/**
 * Applies a change here at once and broadcasts it, flushed before the change is acknowledged, so
 * the next event any replica handles after our reply sees the new list.
 */
export function makeInvalidate(bus: Bus, cache: WebhookCache): Invalidate {
  return async (projectId) => {
    cache.invalidate(projectId)
    bus.publish(SUBJECTS.webhookInvalidate, { projectId } satisfies WebhookInvalidation)
    await bus.flush()
  }
}
