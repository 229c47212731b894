import { WEBHOOK_WILDCARD } from '@mailer/contracts'

/** What the fan-out needs to know about a webhook (held in memory per project). */
export interface WebhookTarget {
  id: string
  events: readonly string[]
  enabled: boolean
  createdAt: Date
}

/**
 * How much earlier than its webhook's `createdAt` an event may be stamped and still reach it.
 * The two times come from different clocks: a webhook's from the webhook service's process (Prisma
 * fills `@default(now())` itself, not PostgreSQL), an event's from whichever process recorded it
 * (the email service on accept, sweeps and tracking, the dispatcher for sent, delivered, bounced…),
 * often on another node. Compared as they were, a clock running behind the webhook service's by more
 * than the user's pause between creating a webhook and sending (milliseconds in a script or an SDK
 * example) stamped the email's events "before" the webhook, and they were skipped without a delivery
 * row or any way to get them. NTP keeps nodes within milliseconds (ntpd steps any offset over 128 ms,
 * chrony's usual `makestep` any over 1 s), so 5 s covers any working cluster with room to spare; the
 * price is that a new webhook may also get events of the 5 s before it, which a receiver handles as
 * any event. Taking both times from PostgreSQL instead would mean a clock read per event on every
 * producer's write path, or a database lookup per event here; this costs nothing.
 */
export const CLOCK_SKEW_GRACE_MS = 5_000

/** `*` matches every event type; otherwise the exact type must be listed. */
export function subscribesTo(events: readonly string[], type: string): boolean {
  return events.includes(WEBHOOK_WILDCARD) || events.includes(type)
}

/**
 * The webhooks that get a delivery of this event: enabled, subscribed to its type, and already
 * existing when the event happened, give or take the clock skew above (a webhook never receives
 * events older than that, even when the consumer is catching up on a backlog).
 */
export function matchingWebhooks<W extends WebhookTarget>(
  webhooks: readonly W[],
  event: { type: string; createdAt: string },
): W[] {
  const at = Date.parse(event.createdAt)
  return webhooks.filter(
    (w) =>
      w.enabled &&
      subscribesTo(w.events, event.type) &&
      (Number.isNaN(at) || w.createdAt.getTime() - CLOCK_SKEW_GRACE_MS <= at),
  )
}
