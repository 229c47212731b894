import { z } from 'zod'

/*
 * Messages behind the public tracking and unsubscribe links (the gateway's /t/* and /u/* routes,
 * contract.md part 5). The gateway verifies the signed token, then asks the owning service over
 * NATS request-reply: the email service records opens and clicks (it owns email_events and the
 * outbox), the broadcast service marks contacts unsubscribed.
 */

/** `email.track.open`: the first open of an email sets opened_at and adds `email.opened`. */
export const TrackOpenRequest = z.object({
  emailId: z.string().min(1),
  userAgent: z.string().max(1024).nullable(),
  requestId: z.string(),
})
export type TrackOpenRequest = z.infer<typeof TrackOpenRequest>

/** `email.track.click`: every click adds `email.clicked`; the first also sets first_clicked_at. */
export const TrackClickRequest = TrackOpenRequest.extend({ url: z.string().min(1).max(8192) })
export type TrackClickRequest = z.infer<typeof TrackClickRequest>

/**
 * `recorded`: an event was added (false for a repeat open, a test email, or an email that no
 * longer exists: the link still works for the reader, nothing is recorded).
 */
export const TrackReply = z.object({ recorded: z.boolean() })
export type TrackReply = z.infer<typeof TrackReply>

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
