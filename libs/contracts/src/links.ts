import { z } from 'zod'
import { isId } from './ids.js'

/*
 * Messages behind the public tracking and unsubscribe links (the gateway's /t/* and /u/* routes,
 * contract.md part 5). The gateway verifies the signed token, answers the reader, then hands the
 * hit on: opens and clicks go to the TRACKING stream, which the email service consumes (it owns
 * email_events and the outbox), so a hit outlives an email service that is down or restarting;
 * unsubscribes are a request-reply to the broadcast service, which marks the contact.
 */

const HitFields = {
  /**
   * An event id (`evt_…`) made by the gateway: the stream's msgID and the id of the event the hit
   * records, so a publish or a delivery repeated records the hit once.
   */
  id: z.string().refine((v) => isId('event', v), 'must be an event id'),
  emailId: z.string().min(1),
  /** When the reader hit the link: the event's `createdAt`, however late it is recorded. */
  at: z.string().datetime({ offset: true }),
  userAgent: z.string().max(1024).nullable(),
  requestId: z.string(),
}

/** `tracking.open`: the first open of an email sets opened_at and adds `email.opened`. */
export const OpenHit = z.object({ kind: z.literal('open'), ...HitFields })
export type OpenHit = z.infer<typeof OpenHit>

/** `tracking.click`: every click adds `email.clicked`; the first also sets first_clicked_at. */
export const ClickHit = z.object({ kind: z.literal('click'), ...HitFields, url: z.string().min(1).max(8192) })
export type ClickHit = z.infer<typeof ClickHit>

/** A message on the TRACKING stream (subject `tracking.<kind>`, msgID = `id`). */
export const TrackingHit = z.discriminatedUnion('kind', [OpenHit, ClickHit])
export type TrackingHit = z.infer<typeof TrackingHit>

/** `contacts.unsubscribe` (served by the broadcast service): marks the contact unsubscribed. */
export const UnsubscribeRequest = z.object({
  projectId: z.string().min(1),
  contactId: z.string().min(1),
})
export type UnsubscribeRequest = z.infer<typeof UnsubscribeRequest>

/**
 * Also `unsubscribed: true` when the contact was already unsubscribed. A contact that no longer
 * exists may answer 404 `contact_not_found`; the unsubscribe page treats that as done.
 */
export const UnsubscribeReply = z.object({ unsubscribed: z.literal(true) })
export type UnsubscribeReply = z.infer<typeof UnsubscribeReply>
