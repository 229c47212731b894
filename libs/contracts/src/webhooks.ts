import { z } from 'zod'
import { EVENT_TYPES, TIMELINE_ONLY_TYPES } from './events.js'
import { pageQuery, queryInstant } from './pagination.js'
import { SLUG_RE } from './projects.js'

/** `whsec_` + 32 random base62 characters (contract.md part 4). */
export const WEBHOOK_SECRET_RE = /^whsec_[A-Za-z0-9]{32}$/
export const WEBHOOK_WILDCARD = '*'

/**
 * Webhooks a project can have. The list is never paginated (interface.md part 1: a short list),
 * and every event of the project is fanned out to each of them, so a client that creates one on
 * every start must hit a wall rather than multiply its deliveries (Stripe allows 16, Postmark 10).
 */
export const MAX_WEBHOOKS_PER_PROJECT = 100

/** Default waits (seconds) after attempt n before attempt n+1; then the delivery is `failed`. */
export const WEBHOOK_RETRY_SCHEDULE_SECONDS = [30, 120, 600, 1800, 3600, 10_800, 21_600, 43_200] as const

/** Only the first 1,024 characters of a receiver's answer are kept. */
export const WEBHOOK_RESPONSE_BODY_MAX = 1024

/** Headers of every delivery (interface.md part 6). */
export const WEBHOOK_HEADERS = {
  signature: 'Service-Signature',
  eventId: 'Service-Event-Id',
  deliveryId: 'Service-Delivery-Id',
  userAgent: 'Service-Webhooks/1.0',
} as const

/**
 * Credentials in a URL are sent decoded, as Basic authorization: a `%` that starts no escape
 * (`https://ops:50%off@host/`) could never be sent, and every delivery would fail.
 */
function credentialsDecode(u: string): boolean {
  try {
    const url = new URL(u)
    decodeURIComponent(url.username)
    decodeURIComponent(url.password)
    return true
  } catch {
    return false
  }
}

/**
 * Port 0 parses but names no port anyone listens on: every delivery failed to connect, and was
 * retried for a day, for a URL that could be refused when it was saved.
 */
const hasUsablePort = (u: string): boolean => {
  try {
    return new URL(u).port !== '0'
  } catch {
    return false
  }
}

const webhookUrl = z
  .string()
  .max(2048, 'url must be at most 2048 characters')
  .regex(/^https?:\/\//i, 'url must start with http:// or https://')
  .refine((u) => URL.canParse(u) && !/\s/.test(u), 'url is not a valid URL')
  .refine(hasUsablePort, 'url port must be from 1 to 65535')
  .refine(credentialsDecode, 'url credentials must be percent-encoded (a % starts an escape such as %25)')

const WEBHOOK_EVENTS_MAX_ENTRIES = 100

const webhookEvents = z
  .array(
    z.enum([...EVENT_TYPES, WEBHOOK_WILDCARD] as [string, ...string[]], {
      error: `must be '*' or one of ${EVENT_TYPES.join(', ')}`,
    }),
  )
  .min(1, "events needs at least one event type, or ['*']")
  // Duplicates are dropped, so the cap is on the work, not on the number of types: capping at the
  // number of types refused a list that only repeated some.
  .max(WEBHOOK_EVENTS_MAX_ENTRIES, `events can have at most ${WEBHOOK_EVENTS_MAX_ENTRIES} entries`)
  .transform((list) => [...new Set(list)])

export const CreateWebhookBody = z.strictObject({
  url: webhookUrl,
  events: webhookEvents.default([WEBHOOK_WILDCARD]),
  enabled: z.boolean().default(true),
})
export type CreateWebhookBody = z.infer<typeof CreateWebhookBody>

export const UpdateWebhookBody = z.strictObject({
  url: webhookUrl.optional(),
  events: webhookEvents.optional(),
  enabled: z.boolean().optional(),
})
export type UpdateWebhookBody = z.infer<typeof UpdateWebhookBody>

export const WebhookRecord = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  enabled: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
})
export type WebhookRecord = z.infer<typeof WebhookRecord>

/** Create and rotate-secret answers: the record plus the secret, shown only here. */
export const WebhookWithSecret = WebhookRecord.extend({ secret: z.string() })
export type WebhookWithSecret = z.infer<typeof WebhookWithSecret>

export const DeletedWebhook = z.object({ id: z.string(), deleted: z.literal(true) })

export const DeliveryStatus = z.enum(['pending', 'success', 'failed'])

export const DeliveryRecord = z.object({
  id: z.string(),
  webhookId: z.string(),
  eventId: z.string(),
  eventType: z.string(),
  /** Attempts made so far (an attempt in flight counts). */
  attempt: z.number().int(),
  status: DeliveryStatus,
  responseCode: z.number().int().nullable(),
  responseBody: z.string().nullable(),
  nextAttemptAt: z.string().nullable(),
  createdAt: z.string(),
  completedAt: z.string().nullable(),
})
export type DeliveryRecord = z.infer<typeof DeliveryRecord>

export const DeliveriesQuery = pageQuery()
export const TestDeliveryResponse = z.object({ deliveryId: z.string() })

/** Core NATS broadcast on `webhook.invalidate`: drop the project's cached webhook list. */
export const WebhookInvalidation = z.object({ projectId: z.string() })
export type WebhookInvalidation = z.infer<typeof WebhookInvalidation>

// --- event log ----------------------------------------------------------------------------

/** Types `GET /v1/events?type=` accepts (timeline-only `email.test` included for test keys). */
export const EVENT_LOG_TYPES = [...EVENT_TYPES, ...TIMELINE_ONLY_TYPES] as const

export const EventsQuery = pageQuery().extend({
  type: z.enum(EVENT_LOG_TYPES as unknown as [string, ...string[]]).optional(),
  emailId: z.string().min(1).max(100).optional(),
  since: queryInstant.optional(),
  until: queryInstant.optional(),
})
export type EventsQuery = z.infer<typeof EventsQuery>

export const AdminEventsQuery = EventsQuery.extend({
  // Worded as the admin email list and analytics word it (zod's default quoted the pattern).
  project: z.string().regex(SLUG_RE, 'project must be a project slug').optional(),
})
export type AdminEventsQuery = z.infer<typeof AdminEventsQuery>
