import type { EventPayload } from '@mailer/contracts'
import { buildEvent, type EmailSummary, eventMessage, isPublished } from '@mailer/email-core'
import type { PreparedSend } from '../domain/prepare.js'
import { textPreview } from '../domain/preview.js'
import type { BroadcastRef } from '../domain/send-key.js'

const DAY_MS = 86_400_000

/** An email about to be stored, with the status it is accepted in. */
export interface NewEmail {
  id: string
  send: PreparedSend
  key: string | null
  /** A broadcast's email (its key is in the broadcasts' namespace: domain/send-key.ts). */
  broadcast?: BroadcastRef | null
  status: 'queued' | 'scheduled' | 'test'
}

/** What the rows of one request share. */
export interface RowContext {
  /** The accepting request's id, stored for the dispatcher's log lines about the email. */
  requestId: string
  projectId: string
  apiKeyId: string | null
  mode: 'live' | 'test'
  source: string
  now: Date
  retentionDays: number
}

/** An event's message as an outbox row of its own (the step-by-step write's `$7`: accept-sql.ts). */
export interface EventOutboxRow {
  email_id: string
  subject: string
  msg_id: string
  payload: unknown
}

/**
 * The rows of one request for the single multi-table insert (see accept-sql.ts), as JSON
 * records whose keys are the column names. An event is its payload (`buildEvent`): the statement
 * makes its timeline row as `timelineRow` in @mailer/email-core does, and its message as
 * `eventMessage` does, where `published`. Dispatch messages are not among them: the statement
 * writes one for each group of queued emails it inserted (accept-sql.ts). `eventOutbox()` gives
 * the events' messages as rows of their own, which only the step-by-step write sends, so they
 * are built only when it runs (one object per email the usual write would throw away).
 */
export function acceptRows(ctx: RowContext, emails: NewEmail[]) {
  const at = ctx.now.toISOString()
  const emailRows = emails.map((e) => emailRow(ctx, e, at))
  const recipients = emails.flatMap((e) => {
    const state = recipientState(e, ctx.now)
    return e.send.recipients.map((r) => ({ email_id: e.id, address: r.address, kind: r.kind, ...state }))
  })
  const contents = emails.map((e) => contentRow(ctx, e))
  const events: Array<{ payload: EventPayload; published: true | undefined }> = []
  const summaries: EmailSummary[] = []
  for (const e of emails) {
    const email = summary(ctx, e)
    summaries.push(email)
    const event = buildEvent(email, acceptEvent(e, ctx.now))
    // The event alone: the statement reads its timeline columns from it and its email, and
    // derives the message of a `published` one (accept-sql.ts).
    events.push({ payload: event, published: isPublished(email, event) || undefined })
  }
  const eventOutbox = (): EventOutboxRow[] =>
    events.flatMap(({ payload }, i) => {
      const message = eventMessage(summaries[i]!, payload)
      return message
        ? [
            {
              email_id: emails[i]!.id,
              subject: message.subject,
              msg_id: message.msgId,
              payload: message.payload,
            },
          ]
        : []
    })
  return { emails: emailRows, recipients, contents, events, eventOutbox }
}

/** `at`: the request's time as ISO text (its creation and queueing time). */
function emailRow(ctx: RowContext, e: NewEmail, at: string) {
  const s = e.send
  const kind = (k: string) => orOmit(s.recipients.filter((r) => r.kind === k).map((r) => r.address))
  const tags = s.input.tags
  // Empty, false and null values are left out (`undefined`: not in the JSON at all); the
  // statement stores them as the columns' empty values (accept-sql.ts).
  return {
    id: e.id,
    project_id: ctx.projectId,
    api_key_id: ctx.apiKeyId ?? undefined,
    mode: ctx.mode,
    source: ctx.source,
    status: e.status,
    from_address: s.from,
    reply_to: orOmit((s.input.replyTo ?? []).map((r) => r.trim())),
    to: kind('to'),
    cc: kind('cc'),
    bcc: kind('bcc'),
    subject: s.subject,
    text_preview: textPreview(s.text, s.html) || undefined,
    tags: tags && Object.keys(tags).length > 0 ? tags : undefined,
    template: s.template ?? undefined,
    template_version: s.templateVersion ?? undefined,
    track_opens: s.input.trackOpens || undefined,
    track_clicks: s.input.trackClicks || undefined,
    idempotency_key: e.key ?? undefined,
    request_hash: e.key ? s.hash : undefined,
    request_id: ctx.requestId,
    broadcast_id: e.broadcast?.broadcastId,
    contact_id: e.broadcast?.contactId,
    created_at: at,
    queued_at: e.status === 'queued' ? at : undefined,
    scheduled_at: s.scheduledAt?.toISOString(),
    /** The email's group of requests counted together, set by the one-statement write (accept-store.ts). */
    grp: undefined as number | undefined,
  }
}

/** An empty list is left out of the statement's JSON (see emailRow). */
const orOmit = <T>(list: T[]): T[] | undefined => (list.length > 0 ? list : undefined)

/**
 * What each recipient starts as: waiting for the dispatcher (`queued`, a scheduled email's too:
 * it is queued when due), or, for a test email, `test` as of its `email.test` event, since it is
 * never relayed and nothing will ever move it on (docs/api.md "Recipient statuses").
 */
function recipientState(e: NewEmail, now: Date) {
  if (e.status === 'test') return { status: 'test', last_event_at: now.toISOString() }
  // Left out: the statement stores `queued` (accept-sql.ts).
  return {}
}

/** Content is kept CONTENT_RETENTION_DAYS past acceptance, or past the scheduled time if later. */
function contentRow(ctx: RowContext, e: NewEmail) {
  const s = e.send
  const from = Math.max(ctx.now.getTime(), s.scheduledAt?.getTime() ?? 0)
  return {
    email_id: e.id,
    html: s.html ?? undefined,
    text: s.text ?? undefined,
    // Empty ones are left out: the statement stores `{}` and `[]` (accept-sql.ts).
    headers: Object.keys(s.headers).length > 0 ? s.headers : undefined,
    attachments: s.attachments.length > 0 ? s.attachments : undefined,
    expires_at: new Date(from + ctx.retentionDays * DAY_MS).toISOString(),
  }
}

function summary(ctx: RowContext, e: NewEmail): EmailSummary {
  return {
    id: e.id,
    projectId: ctx.projectId,
    mode: ctx.mode,
    from: e.send.from,
    subject: e.send.subject,
    tags: e.send.input.tags ?? {},
  }
}

function acceptEvent(e: NewEmail, at: Date) {
  if (e.status === 'test') return { type: 'email.test', at }
  if (e.status === 'scheduled')
    return { type: 'email.scheduled', at, extra: { scheduledAt: e.send.scheduledAt?.toISOString() } }
  return { type: 'email.queued', at }
}
