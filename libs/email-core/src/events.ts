import type { Outbox, OutboxMessage } from '@mailer/bus'
import { type EventMessage, type EventPayload, eventSubject, newId } from '@mailer/contracts'
import type { Db } from '@mailer/db'

/** What an event needs to know about its email (`data` always carries these). */
export interface EmailSummary {
  id: string
  projectId: string
  mode: string
  from: string
  subject: string
  tags: Record<string, string>
}

export interface NewEvent {
  type: string
  recipient?: string | null
  /** Per-type extras merged into `data` (contract.md part 4). */
  extra?: Record<string, unknown>
  at?: Date
}

/** The event exactly as webhooks receive it. */
export function buildEvent(email: EmailSummary, e: NewEvent): EventPayload {
  return {
    id: newId('event'),
    type: e.type,
    createdAt: (e.at ?? new Date()).toISOString(),
    data: {
      emailId: email.id,
      recipient: e.recipient ?? null,
      from: email.from,
      subject: email.subject,
      tags: email.tags,
      ...e.extra,
    },
  }
}

/** An event's timeline row, keyed by column name (multi-row inserts from JSON). */
export function timelineRow(email: EmailSummary, event: EventPayload) {
  return {
    id: event.id,
    project_id: email.projectId,
    email_id: email.id,
    mode: email.mode,
    type: event.type,
    recipient: event.data.recipient,
    payload: event,
    created_at: event.createdAt,
  }
}

/** Whether an event is announced on the bus (webhooks, analytics): a live email's, never `email.test`. */
export const isPublished = (email: EmailSummary, event: EventPayload): boolean =>
  email.mode === 'live' && event.type !== 'email.test'

/**
 * The outbox message announcing an event on the EVENTS stream, or null when it is not published:
 * every event goes on the timeline, but only live emails' events, never `email.test`, reach
 * webhooks and analytics.
 */
export function eventMessage(email: EmailSummary, event: EventPayload): OutboxMessage | null {
  if (!isPublished(email, event)) return null
  return {
    subject: eventSubject(event.type),
    msgId: event.id,
    payload: { projectId: email.projectId, event } satisfies EventMessage,
  }
}

type Tx = Pick<Db, 'emailEvent' | 'outboxMessage'>

/**
 * Appends events to their emails' timelines and announces the published ones through the outbox,
 * in the caller's transaction. Returns the outbox rows to `outbox.publish` after the commit.
 */
export async function recordEvents(
  tx: Tx,
  outbox: Outbox,
  items: Array<{ email: EmailSummary; event: EventPayload }>,
) {
  if (items.length === 0) return []
  await tx.emailEvent.createMany({
    data: items.map(({ email, event }) => ({
      id: event.id,
      projectId: email.projectId,
      emailId: email.id,
      mode: email.mode,
      type: event.type,
      recipient: event.data.recipient,
      payload: event as object,
      createdAt: new Date(event.createdAt),
    })),
  })
  const messages = items.map(({ email, event }) => eventMessage(email, event)).filter((m) => m !== null)
  return outbox.write(tx, messages)
}
