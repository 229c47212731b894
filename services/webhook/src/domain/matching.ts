import { WEBHOOK_WILDCARD } from '@mailer/contracts'

/** What the fan-out needs to know about a webhook (held in memory per project). */
export interface WebhookTarget {
  id: string
  events: readonly string[]
  enabled: boolean
  createdAt: Date
}

/** `*` matches every event type; otherwise the exact type must be listed. */
export function subscribesTo(events: readonly string[], type: string): boolean {
  return events.includes(WEBHOOK_WILDCARD) || events.includes(type)
}

/**
 * The webhooks that get a delivery of this event: enabled, subscribed to its type, and already
 * existing when the event happened (a webhook never receives events older than itself, even when
 * the consumer is catching up on a backlog).
 */
export function matchingWebhooks<W extends WebhookTarget>(
  webhooks: readonly W[],
  event: { type: string; createdAt: string },
): W[] {
  const at = Date.parse(event.createdAt)
  return webhooks.filter(
    (w) =>
      w.enabled && subscribesTo(w.events, event.type) && (Number.isNaN(at) || w.createdAt.getTime() <= at),
  )
}
