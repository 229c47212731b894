import { z } from 'zod'

/** Event types (contract.md part 4). `email.test` is timeline-only and never published. */
export const EVENT_TYPES = [
  'email.queued',
  'email.scheduled',
  'email.sent',
  'email.retrying',
  'email.delivered',
  'email.deferred',
  'email.bounced',
  'email.complained',
  'email.rejected',
  'email.failed',
  'email.canceled',
  'email.opened',
  'email.clicked',
] as const
export const EventType = z.enum(EVENT_TYPES)
export type EventType = z.infer<typeof EventType>
export const TIMELINE_ONLY_TYPES = ['email.test'] as const

export const DeliveryInfo = z.object({
  status: z.string(),
  provider: z.string(),
  deliveryTimeMs: z.number().int(),
  smtpStatusCode: z.number().int().nullable().optional(),
  smtpResponse: z.string().nullable().optional(),
})

/** `data` of every event; extra per-type fields ride along (contract.md part 4). */
export const EventData = z
  .object({
    emailId: z.string(),
    recipient: z.string().nullable(),
    from: z.string(),
    subject: z.string(),
    tags: z.record(z.string(), z.string()),
  })
  .catchall(z.unknown())

/** An event exactly as webhooks receive it and `GET /v1/events` lists it. */
export const EventPayload = z.object({
  id: z.string(),
  type: z.string(),
  createdAt: z.string(),
  data: EventData,
})
export type EventPayload = z.infer<typeof EventPayload>

/**
 * An item of `GET /v1/admin/events`: the event as webhooks receive it plus the project it belongs
 * to, as the admin email list's items carry theirs (the route spans every project).
 */
export const AdminEventRecord = EventPayload.extend({ projectId: z.string() })
export type AdminEventRecord = z.infer<typeof AdminEventRecord>

/**
 * A message on the EVENTS stream (subject `events.<type>`, msgID = event id). Only live-mode
 * events are published; test-key sends fire nothing.
 */
export const EventMessage = z.object({
  projectId: z.string(),
  event: EventPayload,
})
export type EventMessage = z.infer<typeof EventMessage>

/** Most events one group message carries. */
export const EVENT_GROUP_MAX = 100
/**
 * About the most bytes of events one group message carries (a group may pass it by its first
 * event, the one whose running size crossed a multiple of it: at most ~60 KB, 50 tags of 64 + 256
 * characters, three bytes each, and the subject). A group of 100 such events was several MB, over
 * NATS's max_payload (1 MiB by default): the outbox kept it and passed over it, and none of its
 * events reached a webhook or analytics.
 */
export const EVENT_GROUP_MAX_BYTES = 256 * 1024

/**
 * A message on the EVENTS stream (subject `events.group`, msgID `g:<first event id>`) carrying the
 * events one write recorded together: an accept's group commit, a batch of delivery outcomes. One
 * message per event cost a JetStream round trip, an outbox row and a delivery to each consumer
 * per event (bench/README.md). Consumers read both shapes; each event keeps its own project.
 */
export const EventGroupMessage = z.object({
  events: z.array(EventMessage).min(1).max(EVENT_GROUP_MAX),
})
export type EventGroupMessage = z.infer<typeof EventGroupMessage>

/** Either shape of an EVENTS message, as its events. */
export const EventsOnStream = z.union([
  EventGroupMessage.transform((m) => m.events),
  EventMessage.transform((m) => [m]),
])

/**
 * Reads an EVENTS message event by event: a group whose events are not all valid keeps the valid
 * ones, and names the others (`rejected`: a schema message each), so one malformed event (a
 * producer's bug, versions out of step in a rollout) does not take up to 99 good ones down with
 * it. `invalid` when the message is neither shape, or a single event that does not parse.
 */
export function readEventsMessage(
  raw: unknown,
): { events: EventMessage[]; rejected: string[] } | { invalid: string } {
  const group = z.object({ events: z.array(z.unknown()).min(1).max(EVENT_GROUP_MAX) }).safeParse(raw)
  if (!group.success) {
    const single = EventMessage.safeParse(raw)
    return single.success
      ? { events: [single.data], rejected: [] }
      : { invalid: single.error.issues[0]?.message ?? 'not an event message' }
  }
  const events: EventMessage[] = []
  const rejected: string[] = []
  for (const item of group.data.events) {
    const one = EventMessage.safeParse(item)
    if (one.success) events.push(one.data)
    else rejected.push(one.error.issues[0]?.message ?? 'not an event')
  }
  return { events, rejected }
}

/** Most emails one dispatch message names; larger groups are split (see `DispatchMessage`). */
export const DISPATCH_GROUP_MAX = 50

/**
 * A message on the EMAILS stream: emails ready for a delivery attempt. Written as `emailIds`, one
 * message for the emails one write made ready (an accept's group commit, a sweep), at most
 * DISPATCH_GROUP_MAX each, msgID `<first id>:<its attempts>`: a message per email cost a JetStream
 * round trip, an outbox row and a consumer delivery each (bench/README.md). The one-email shape
 * (`emailId`, msgID `<emailId>:<attempt>`) is what earlier versions wrote; it is still read, so
 * messages in the stream during an upgrade are delivered.
 */
export const DispatchMessage = z.union([
  z.object({ emailIds: z.array(z.string().min(1)).min(1).max(DISPATCH_GROUP_MAX) }),
  z.object({ emailId: z.string().min(1), projectId: z.string(), attempt: z.number().int().min(0) }),
])
export type DispatchMessage = z.infer<typeof DispatchMessage>
