import { z } from 'zod'
import { nameAddr } from './name-addr.js'
import { pageQuery, queryInstant } from './pagination.js'
import { withoutProtoKey } from './proto-key.js'

/** Email statuses (contract.md part 3). */
export const EMAIL_STATUS_VALUES = [
  'queued',
  'scheduled',
  'sending',
  'sent',
  'delivered',
  'deferred',
  'bounced',
  'complained',
  'rejected',
  'failed',
  'test',
  'canceled',
] as const

export const MAX_RECIPIENTS = 50
export const MAX_ATTACHMENTS = 20
export const MAX_BATCH = 100
export const MAX_SCHEDULE_DAYS = 30
/**
 * Events an email record carries at most, oldest first. Every click is an event and anyone holding
 * a tracked link can repeat it, so a timeline has no bound: whole, it outgrew the bus's message
 * limit and the email could no longer be read. GET /v1/events?emailId= pages through all of them.
 */
export const MAX_RECORD_EVENTS = 1000

// Deliberately lenient (one @, no spaces, control characters or brackets, a dotted domain): the
// suppression list's pattern minus control characters, so every address we send to can also be
// suppressed.
export const ADDRESS_RE =
  /^[^\s\p{Cc}@<>()[\]\\,;:"]+@[^\s\p{Cc}@<>()[\]\\,;:"]+\.[^\s\p{Cc}@<>()[\]\\,;:".]+$/u

/**
 * `a@b.c` or `Name <a@b.c>`; null when neither. A quoted name may hold `\"` and `\\` (RFC 5322
 * quoted-pair), so a name with quotes in it (`"Acme \"Rocket\" Co"`) can be given; the message
 * carries it quoted or encoded again (the dispatcher's renderer).
 */
export function parseMailbox(value: string): { name: string | null; address: string } | null {
  const s = value.trim()
  if (/[\r\n]/.test(s)) return null
  const m = nameAddr(s)
  const address = m ? m.address : s
  if (address.length > 320 || !ADDRESS_RE.test(address)) return null
  const name = m ? (m.quoted ? m.name.replace(/\\(.)/g, '$1') : m.name).trim() : ''
  return { name: name || null, address }
}

/**
 * Control characters other than tab (line breaks are refused on their own, with their own
 * message): nodemailer writes ASCII ones into a header as they are (only non-ASCII text is
 * encoded), and no header may hold them (RFC 5322 allows VCHAR and WSP).
 */
export const CONTROL_CHARS_RE = /(?!\t)\p{Cc}/u
const noControls = (s: string) => !CONTROL_CHARS_RE.test(s)
const CONTROL_CHARS_ALL = new RegExp(CONTROL_CHARS_RE.source, 'gu')
/** `s` without the characters CONTROL_CHARS_RE refuses (text stored or rendered before a check). */
export const withoutControls = (s: string): string => s.replace(CONTROL_CHARS_ALL, '')

/**
 * An address is stored trimmed (and lower-cased, as a recipient), so its 320-character limit
 * (RFC 5321's 64 + 1 + 255, as commonly rounded) applies to the trimmed value: spaces pasted
 * around an address of valid length made it 400 before.
 */
const address = z
  .string()
  .trim()
  .max(320, 'must be at most 320 characters')
  .refine((s) => ADDRESS_RE.test(s), 'must be an email address like a@b.c')
/**
 * A sender or reply-to mailbox, wherever one is taken: a send's `from`/`replyTo`, a broadcast's
 * `from`, a project's `defaultFrom` (the last two become a send's `from` without passing its
 * checks, so one rule for all of them).
 */
export const mailboxString = (invalid = 'must be "Name <a@b.c>" or a@b.c') =>
  z
    .string()
    // Stored trimmed, like an address: the limit is on what is kept (parseMailbox trims too).
    .trim()
    .max(400, 'must be at most 400 characters')
    .refine((s) => parseMailbox(s) !== null, invalid)
    // The display name is encoded in the header, but shown by mail clients, the dashboard and the
    // CLI: no reason for an escape sequence there, as in a subject.
    .refine(noControls, 'cannot contain control characters')
const mailbox = mailboxString()
/**
 * One address or a list of them. The OpenAPI generator shows a preprocess as its output (a list
 * only), which would tell clients that `to: "a@b.c"` is refused: the metadata describes what is
 * accepted, a string (with the item's limits) or a list of them.
 */
const listOf = <T extends z.ZodType>(item: T, min = 0) => {
  const { $schema: _, ...one } = z.toJSONSchema(item, { io: 'input', unrepresentable: 'any' })
  return z
    .preprocess(
      (v) => (typeof v === 'string' ? [v] : v),
      z.array(item).min(min, `needs at least ${min} address`),
    )
    .meta({ ...one, type: ['string', 'array'], items: one, ...(min > 0 ? { minItems: min } : {}) })
}
/**
 * Tags per email (SES's limit; the contract bounds only their length). Every event of the email
 * carries them, to webhooks and analytics, and a dispatcher outcome is one bus message: without a
 * bound one email could outgrow NATS's message limit.
 */
export const MAX_TAGS = 50
const TAG_NAME_RULE = 'a tag name has 1-64 characters'
const noLineBreaks = (s: string) => !/[\r\n]/.test(s)
const noNul = (s: string) => !s.includes('\u0000')

/**
 * A subject, wherever one is saved: a send's, a template's, a broadcast's (the last two are
 * Handlebars sources, rendered into a send's subject). One header line of at most 998 characters
 * with no control character but tab: rendering used to drop those silently from a template's or
 * broadcast's own text, so what was saved was not what was sent; they are refused when saved, as
 * a send's are (400 `invalid_body`, param `subject`).
 */
export const subjectString = () =>
  z
    .string()
    .min(1)
    .max(998)
    .refine(noLineBreaks, 'subject cannot contain line breaks')
    .refine(noControls, 'subject cannot contain control characters')

/**
 * The send input (interface.md part 2, contract.md part 3). `headers`, `attachments` and
 * `scheduledAt` are checked later, in the contract's check order, with their own codes
 * (`invalid_header`, `invalid_attachment`, `invalid_schedule`), so here they are taken as given.
 */
export const SendEmailInput = z
  .strictObject({
    from: mailbox.optional(),
    to: listOf(address, 1),
    cc: listOf(address).optional(),
    bcc: listOf(address).optional(),
    replyTo: listOf(mailbox).optional(),
    subject: subjectString().optional(),
    html: z.string().optional(),
    text: z.string().optional(),
    template: z.string().min(1).max(100).optional(),
    data: z.unknown().optional(),
    headers: z.unknown().optional(),
    attachments: z.unknown().optional(),
    tags: withoutProtoKey(
      z
        .record(
          z.string().min(1, TAG_NAME_RULE).max(64, TAG_NAME_RULE),
          z.string().max(256, 'a tag value has at most 256 characters'),
        )
        .refine((t) => Object.keys(t).length <= MAX_TAGS, `at most ${MAX_TAGS} tags`),
      'a tag',
    ).optional(),
    scheduledAt: z.unknown().optional(),
    trackOpens: z.boolean().optional(),
    trackClicks: z.boolean().optional(),
    idempotencyKey: z.string().min(1).max(256).optional(),
  })
  .superRefine((v, ctx) => {
    if (v.html === undefined && v.text === undefined && v.template === undefined) {
      ctx.addIssue({ code: 'custom', path: ['html'], message: 'one of html, text or template is required' })
    } else if (!v.html && !v.text && v.template === undefined) {
      // `html: ""` (or `text: ""`) alone sent a message with no body at all; a template's or a
      // broadcast's html and text cannot be empty either.
      ctx.addIssue({
        code: 'custom',
        path: ['html'],
        message: 'html and text cannot both be empty: one of html, text or template is required',
      })
    }
    if (v.data !== undefined && v.template === undefined) {
      ctx.addIssue({ code: 'custom', path: ['data'], message: 'data is only used with template' })
    }
  })
export type SendEmailInput = z.infer<typeof SendEmailInput>

/**
 * A Content-ID as the message can carry it (a msg-id, RFC 2045 7): printable ASCII, with `<` and
 * `>` only as one pair around the whole. Anything else was rewritten on the way (non-ASCII became
 * an RFC 2047 encoded word, inner brackets were dropped), so the html's `cid:` never found its image.
 */
const CONTENT_ID_RE = /^(?:<[ !-;=?-~]+>|[ !-;=?-~]+)$/

/** One attachment once checked (contract.md part 3). */
export const Attachment = z.strictObject({
  filename: z
    .string()
    .min(1)
    .max(255)
    .refine(noLineBreaks, 'filename cannot contain line breaks')
    // Written into Content-Type and Content-Disposition as they are, where no header may hold them.
    .refine(noControls, 'filename cannot contain control characters')
    // The MIME writer (nodemailer) quotes a plain-ASCII name as a JSON string, where `\t` reads
    // back as `t` ("a<TAB>b.txt" arrived as "atb.txt"), and leaves a backslash in Content-Type's
    // `name` unescaped (`C:\dir\x.txt` read as `C:dirx.txt`): refused rather than mangled.
    .refine((s) => !/[\t\\]/.test(s), 'filename cannot contain a tab or a backslash'),
  content: z.string().min(1),
  type: z
    .string()
    // RFC 6838 4.2: at most 127 characters each side; one unbroken token that no fold can shorten.
    .regex(/^[\w.+-]{1,127}\/[\w.+-]{1,127}$/, 'type must be a MIME type like application/pdf')
    .optional(),
  disposition: z.enum(['attachment', 'inline']).optional(),
  contentId: z
    .string()
    .min(1)
    .max(255)
    .refine(noLineBreaks, 'contentId cannot contain line breaks')
    .regex(CONTENT_ID_RE, 'contentId must be printable ASCII, with < and > only around the whole id')
    .optional(),
})
export type Attachment = z.infer<typeof Attachment>

export const SendResult = z.object({
  id: z.string(),
  status: z.enum(['queued', 'scheduled', 'test']),
  idempotent: z.boolean().optional(),
})
export type SendResult = z.infer<typeof SendResult>

/**
 * 202 for an accepted live email, 200 for a test email (interface.md part 4) and for a dry run
 * (`id: null`): nothing was queued, so 202 Accepted would say otherwise.
 */
export const sendStatus = (result: unknown): number => {
  const r = result as { id?: unknown; status?: string } | null
  return r?.status === 'test' || r?.id === null ? 200 : 202
}

export const BatchItemError = z.object({
  error: z.object({ type: z.string(), code: z.string(), message: z.string(), param: z.string().optional() }),
})
/** A dry-run item that would be accepted: no id, since nothing was stored. */
export const DryRunResult = z.object({ id: z.null(), status: SendResult.shape.status })
export type DryRunResult = z.infer<typeof DryRunResult>
export const BatchItemResult = z.union([SendResult, DryRunResult, BatchItemError])
export type BatchItemResult = z.infer<typeof BatchItemResult>
export const BatchResponse = z.object({ data: z.array(BatchItemResult) })
/** A single send's answer: a dry run answers as a batch's dry-run item would. */
export const SendResponse = z.union([SendResult, DryRunResult])

/** The batch body is a JSON array of 1-100 send inputs; `?dryRun=true` only validates. */
export const BatchBody = z
  .array(z.unknown())
  .min(1, 'the batch needs at least one email')
  .max(MAX_BATCH, `a batch holds at most ${MAX_BATCH} emails`)
/**
 * The batch body as the OpenAPI document shows it. BatchBody takes any items because each is
 * checked on its own and answered in its place; a client still needs to know what an item is.
 */
export const DocumentedBatchBody = z.array(SendEmailInput).min(1).max(MAX_BATCH)
export const BatchQuery = z.object({
  dryRun: z
    .enum(['true', 'false', '1', '0'])
    .transform((v) => v === 'true' || v === '1')
    .optional(),
})
/** The single send takes the batch's `?dryRun` (a dry run of one item). */
export const SendQuery = BatchQuery

/**
 * An address in a query string (`to`, `from`). A `+` typed into a URL's query is a space once
 * decoded (form encoding), so a plus address (`?to=ann+news@x.test`, common with the
 * filters people set up in their mailboxes) arrived as `ann news@x.test` and was refused as no
 * address. No address holds a space, so each one inside the value is read as the `+` it was.
 */
const queryAddress = z.preprocess(
  (v) => (typeof v === 'string' ? v.trim().replaceAll(' ', '+') : v),
  address.toLowerCase(),
)

/**
 * The (key, value) pairs the list filter `tag=<key>:<value>` can mean. A send takes any tag key of
 * 1-64 characters, `:` included (`utm:source`), so splitting at the first `:` alone made such a
 * tag impossible to find: each `:` that leaves a key of 1-64 characters and a value of at most 256
 * is a reading, and an email holding any of them matches.
 */
export function tagSplits(tag: string): Array<[string, string]> {
  const out: Array<[string, string]> = []
  for (let at = tag.indexOf(':'); at > 0 && at <= 64; at = tag.indexOf(':', at + 1))
    if (tag.length - at - 1 <= 256) out.push([tag.slice(0, at), tag.slice(at + 1)])
  return out
}

export const ListEmailsQuery = pageQuery().extend({
  status: z.enum(EMAIL_STATUS_VALUES).optional(),
  to: queryAddress.optional(),
  from: queryAddress.optional(),
  // Trimmed, and a blank one (a cleared search box) filters nothing, as the contacts' and
  // templates' searches do.
  q: z.string().trim().max(200).refine(noNul, 'q cannot contain NUL characters').optional(),
  tag: z
    .string()
    // At most a 64-character key, `:` and a 256-character value. Any character a send takes in a
    // tag counts, line breaks included: `.` left them out, so an email whose tag value held one
    // could not be found by it (400 `invalid_query` for the very value it was sent with).
    .min(2, 'tag must be key:value')
    .max(321, 'tag must be key:value')
    .refine((t) => tagSplits(t).length > 0, 'tag must be key:value')
    .refine(noNul, 'tag cannot contain NUL characters')
    .optional(),
  since: queryInstant.optional(),
  until: queryInstant.optional(),
})
export type ListEmailsQuery = z.infer<typeof ListEmailsQuery>

/**
 * `PATCH /v1/emails/:id`. `scheduledAt` is checked by the handler with the send's rule, so that
 * every problem with it is `invalid_schedule`, its absence included: `{}` was `invalid_body` with
 * zod's "expected nonoptional, received undefined" while `{ scheduledAt: null }` was
 * `invalid_schedule` "scheduledAt is required".
 */
export const RescheduleBody = z.strictObject({ scheduledAt: z.unknown().optional() })
/** The reschedule body as the OpenAPI document shows it: a required instant with an offset. */
export const DocumentedRescheduleBody = z.strictObject({ scheduledAt: z.iso.datetime({ offset: true }) })

export const CanceledEmail = z.object({ id: z.string(), status: z.literal('canceled') })

export const EmailRecipientRecord = z.object({
  address: z.string(),
  kind: z.enum(['to', 'cc', 'bcc']),
  status: z.string(),
  smtpStatus: z.number().int().nullable(),
  smtpResponse: z.string().nullable(),
  deliveryMs: z.number().int().nullable(),
  bounceType: z.string().nullable(),
  lastEventAt: z.string().nullable(),
})

export const TimelineEvent = z.object({
  id: z.string(),
  type: z.string(),
  recipient: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
})

/** A list item: the email record without `recipients` and `events`. */
export const EmailSummaryRecord = z.object({
  id: z.string(),
  status: z.enum(EMAIL_STATUS_VALUES),
  mode: z.enum(['live', 'test']),
  source: z.string(),
  apiKeyId: z.string().nullable(),
  from: z.string(),
  replyTo: z.array(z.string()),
  to: z.array(z.string()),
  cc: z.array(z.string()),
  bcc: z.array(z.string()),
  subject: z.string(),
  textPreview: z.string(),
  tags: z.record(z.string(), z.string()),
  template: z.string().nullable(),
  templateVersion: z.number().int().nullable(),
  attempts: z.number().int(),
  lastError: z.string().nullable(),
  trackOpens: z.boolean(),
  trackClicks: z.boolean(),
  createdAt: z.string(),
  queuedAt: z.string().nullable(),
  sentAt: z.string().nullable(),
  deliveredAt: z.string().nullable(),
  failedAt: z.string().nullable(),
  scheduledAt: z.string().nullable(),
  openedAt: z.string().nullable(),
  firstClickedAt: z.string().nullable(),
})

/** `GET /v1/emails/:id` (contract.md part 3 "Email record"); events oldest first. */
export const EmailRecord = EmailSummaryRecord.extend({
  recipients: z.array(EmailRecipientRecord),
  events: z.array(TimelineEvent),
})
export type EmailRecord = z.infer<typeof EmailRecord>
export type EmailSummaryRecord = z.infer<typeof EmailSummaryRecord>

export const EmailContentRecord = z.object({
  html: z.string().nullable(),
  text: z.string().nullable(),
  headers: z.record(z.string(), z.string()),
  attachments: z.array(z.object({ filename: z.string(), type: z.string(), size: z.number().int() })),
})
export type EmailContentRecord = z.infer<typeof EmailContentRecord>
