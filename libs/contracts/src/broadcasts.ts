import { z } from 'zod'
import { mailboxString, subjectString } from './emails.js'
import { displayName } from './names.js'
import { pageQuery } from './pagination.js'
import { MAX_TEMPLATE_PART } from './templates.js'

/** Broadcast statuses (contract.md part 5). */
export const BROADCAST_STATUSES = ['draft', 'scheduled', 'sending', 'paused', 'sent', 'canceled'] as const
export type BroadcastStatus = (typeof BROADCAST_STATUSES)[number]

/** Nothing more will be sent for these. */
export const FINAL_BROADCAST_STATUSES = ['sent', 'canceled'] as const satisfies readonly BroadcastStatus[]

const mailbox = mailboxString()
const subject = subjectString()
  // Rendered subjects are trimmed and a contact whose subject renders empty gets no email, so a
  // blank subject (spaces, control characters) would send the broadcast to no one.
  .refine((s) => /[^\s\p{Cc}]/u.test(s), 'subject cannot be blank')
// Capped as a template's parts are: each contact's email is rendered from them, and an uncapped
// 3 MB newsletter rendered for a chunk of 100 contacts took a 512 MiB broadcast pod down.
const html = z.string().min(1, 'html cannot be empty').max(MAX_TEMPLATE_PART)
const text = z.string().min(1).max(MAX_TEMPLATE_PART)

/** A draft. `subject`, `html` and `text` are Handlebars templates over each contact's variables. */
export const CreateBroadcastBody = z.strictObject({
  audienceId: z.string().min(1).max(100),
  from: mailbox,
  subject,
  html,
  text: text.nullable().optional(),
  name: displayName().nullable().optional(),
})
export type CreateBroadcastBody = z.infer<typeof CreateBroadcastBody>

/** Drafts only; `text` and `name` may be cleared with null. */
export const UpdateBroadcastBody = CreateBroadcastBody.partial()
export type UpdateBroadcastBody = z.infer<typeof UpdateBroadcastBody>

/** `scheduledAt` is checked by the service (400 `invalid_schedule`), like an email's. */
export const SendBroadcastBody = z.strictObject({ scheduledAt: z.unknown().optional() })

export const BroadcastsQuery = pageQuery().extend({ status: z.enum(BROADCAST_STATUSES).optional() })
export type BroadcastsQuery = z.infer<typeof BroadcastsQuery>

export const BroadcastRecord = z.object({
  id: z.string(),
  name: z.string().nullable(),
  audienceId: z.string(),
  from: z.string(),
  subject: z.string(),
  html: z.string(),
  text: z.string().nullable(),
  status: z.enum(BROADCAST_STATUSES),
  /** Email status → count of the broadcast's emails so far. */
  counts: z.record(z.string(), z.number().int()),
  scheduledAt: z.string().nullable(),
  /** When a paused (or paced) broadcast continues. */
  resumeAt: z.string().nullable(),
  startedAt: z.string().nullable(),
  completedAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
})
export type BroadcastRecord = z.infer<typeof BroadcastRecord>

/**
 * A list item: the broadcast without its html and text (GET /v1/broadcasts/:id has them). A page
 * of 100 broadcasts with their bodies (up to 2 MB each) would outgrow a NATS message, and every
 * list request would fail.
 */
export const BroadcastSummaryRecord = BroadcastRecord.omit({ html: true, text: true })
export type BroadcastSummaryRecord = z.infer<typeof BroadcastSummaryRecord>

export const DeletedBroadcast = z.object({ id: z.string(), deleted: z.literal(true) })

// --- broadcast emails ---------------------------------------------------------------------

/** The idempotency key of a contact's email: a crash or restart never sends it twice. */
export const broadcastEmailKey = (broadcastId: string, contactId: string): string =>
  `bc:${broadcastId}:${contactId}`

/** The broadcast and contact of a broadcast email's idempotency key, or null for other keys. */
export function parseBroadcastEmailKey(
  key: string | null | undefined,
): { broadcastId: string; contactId: string } | null {
  const m = /^bc:(bc_[0-9A-Z]{26}):(ct_[0-9A-Z]{26})$/.exec(key ?? '')
  return m ? { broadcastId: m[1]!, contactId: m[2]! } : null
}

/**
 * `email.allowance` (broadcast → email, request-reply): how many emails the project may send
 * now. Broadcast emails may use only a share of the per-minute limit (BROADCAST_RATE_SHARE),
 * so transactional sends always find room; the broadcast sender sizes its chunks by
 * `broadcastLeft` and waits `retryAfterMs` when it is 0 while the day still has room.
 */
export const SendAllowanceRequest = z.object({
  projectId: z.string().min(1),
  /** The project's current daily limit (0 = none), as the auth service reports it. */
  dailyLimit: z.number().int().min(0),
  requestId: z.string().optional(),
})
export type SendAllowanceRequest = z.infer<typeof SendAllowanceRequest>

export const SendAllowance = z.object({
  /** Emails of any source the rate limit admits now. */
  rateLeft: z.number().int().min(0),
  /** Emails left today; null when the project has no daily limit. */
  dayLeft: z.number().int().min(0).nullable(),
  /** Broadcast emails admitted now: within the broadcast share of the rate and within the day. */
  broadcastLeft: z.number().int().min(0),
  /** A good wait before asking again when `broadcastLeft` is 0. */
  retryAfterMs: z.number().int().min(0),
})
export type SendAllowance = z.infer<typeof SendAllowance>
