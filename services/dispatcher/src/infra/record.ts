import { inTransaction, type PgPool } from '@mailer/db'
import { buildEvent, type EmailSummary, eventMessage, timelineRow } from '@mailer/email-core'
import type { ClaimedEmail } from '../domain/claimed-email.js'
import type { Plan } from '../domain/outcome.js'

export type OutboxRows = Array<{ id: bigint; subject: string; msgId: string; payload: unknown }>

// Guarded by the claim (status and claimed_at): a dispatcher that lost its claim to another
// replica writes nothing for that email.
const EMAILS_SQL = `
UPDATE emails e SET
  status = v.status,
  next_attempt_at = v.next_attempt_at,
  claimed_at = NULL,
  sent_at = CASE WHEN v.sent THEN COALESCE(e.sent_at, v.at) ELSE e.sent_at END,
  delivered_at = CASE WHEN v.sent THEN COALESCE(e.delivered_at, v.at) ELSE e.delivered_at END,
  failed_at = CASE WHEN v.failed THEN COALESCE(e.failed_at, v.at) ELSE e.failed_at END,
  message_id = CASE WHEN v.sent THEN v.message_id ELSE e.message_id END,
  last_error = COALESCE(v.last_error, e.last_error)
FROM jsonb_to_recordset($1::jsonb) AS v(id text, status text, next_attempt_at timestamptz, sent boolean,
  at timestamptz, failed boolean, message_id text, last_error text, claimed_at timestamptz)
WHERE e.id = v.id AND e.status = 'sending' AND e.claimed_at = v.claimed_at
RETURNING e.id`

const RECIPIENTS_SQL = `
UPDATE email_recipients r SET
  status = v.status,
  smtp_status = v.smtp_status,
  smtp_response = v.smtp_response,
  delivery_ms = COALESCE(v.delivery_ms, r.delivery_ms),
  bounce_type = COALESCE(v.bounce_type, r.bounce_type),
  last_event_at = v.at
FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::int[], $7::text[], $8::timestamptz[])
  AS v(email_id, address, status, smtp_status, smtp_response, delivery_ms, bounce_type, at)
WHERE r.email_id = v.email_id AND r.address = v.address`

// A suppression that exists is kept as it is: a complaint or manual entry is never downgraded
// to a hard bounce, and the first bounce stays the source.
const SUPPRESS_SQL = `
INSERT INTO suppressions (address, reason, source_email_id)
SELECT a, 'hard_bounce', e FROM unnest($1::text[], $2::text[]) AS v(a, e)
ON CONFLICT (address) DO NOTHING`

// The events on the timeline and, for live emails (never `email.test`), in the outbox: what
// recordEvents in @mailer/email-core does (timelineRow, eventMessage), as one statement.
const EVENTS_SQL = `
WITH v AS (
  INSERT INTO email_events (id, project_id, email_id, mode, type, recipient, payload, created_at)
  SELECT id, project_id, email_id, mode, type, recipient, payload, created_at
  FROM jsonb_to_recordset($1::jsonb) AS x(id text, project_id text, email_id text, mode text, type text,
    recipient text, payload jsonb, created_at timestamptz)
)
INSERT INTO outbox (subject, msg_id, payload)
SELECT subject, msg_id, payload FROM jsonb_to_recordset($2::jsonb) AS o(subject text, msg_id text, payload jsonb)
RETURNING id::text AS id, subject, msg_id AS "msgId", payload`

/** One attempt's outcome to record. */
export interface AttemptRecord {
  email: ClaimedEmail
  plan: Plan
  messageId: string
}

/**
 * Writes the outcomes of several attempts (one per email) in one transaction: the emails, their
 * recipients, new suppressions and the events (timeline rows plus outbox rows). Answers, per
 * attempt in order, the outbox rows to publish after the commit, or null when the claim was no
 * longer ours (nothing written for that email). Concurrent attempts are combined by a GroupCommit
 * in the dispatch handler: one commit for many emails instead of one each.
 */
export async function recordOutcomes(
  pool: PgPool,
  records: AttemptRecord[],
): Promise<Array<OutboxRows | null>> {
  // Through plain pg: Prisma costs ~1.5 ms of CPU per statement, and this runs for every email.
  return inTransaction(pool, async (tx) => {
    const { rows: updated } = await tx.query<{ id: string }>(EMAILS_SQL, [
      JSON.stringify(
        records.map(({ email, plan, messageId }) => ({
          id: email.id,
          status: plan.status,
          next_attempt_at: plan.nextAttemptAt,
          sent: plan.sent,
          at: plan.at,
          failed: plan.failed,
          message_id: messageId,
          last_error: plan.lastError,
          claimed_at: email.claimedAt,
        })),
      ),
    ])
    const ours = new Set(updated.map((r) => r.id))
    const kept = records.filter((r) => ours.has(r.email.id))

    const rs = kept.flatMap(({ email, plan }) =>
      plan.recipients.map((r) => ({ ...r, emailId: email.id, at: plan.at })),
    )
    if (rs.length) {
      await tx.query(RECIPIENTS_SQL, [
        rs.map((r) => r.emailId),
        rs.map((r) => r.address),
        rs.map((r) => r.status),
        rs.map((r) => r.smtpStatus),
        rs.map((r) => r.smtpResponse),
        rs.map((r) => r.deliveryMs),
        rs.map((r) => r.bounceType),
        rs.map((r) => r.at),
      ])
    }
    // Sorted, so that two combined writes never take the same suppression rows in opposite orders.
    const suppress = kept
      .flatMap(({ email, plan }) => plan.suppress.map((a) => ({ a, e: email.id })))
      .sort((x, y) => (x.a < y.a ? -1 : x.a > y.a ? 1 : 0))
    if (suppress.length) await tx.query(SUPPRESS_SQL, [suppress.map((x) => x.a), suppress.map((x) => x.e)])

    const timeline: unknown[] = []
    const messages: Array<{ subject: string; msg_id: string; payload: unknown }> = []
    /** Which attempt each outbox message belongs to. */
    const owner = new Map<string, number>()
    for (const [i, { email, plan }] of records.entries()) {
      if (!ours.has(email.id)) continue
      const summary: EmailSummary = {
        id: email.id,
        projectId: email.projectId,
        mode: email.mode,
        from: email.from,
        subject: email.subject,
        tags: email.tags,
      }
      for (const e of plan.events.map((ev) => buildEvent(summary, { ...ev, at: plan.at }))) {
        timeline.push(timelineRow(summary, e))
        const m = eventMessage(summary, e)
        if (m === null) continue
        owner.set(m.msgId, i)
        messages.push({ subject: m.subject, msg_id: m.msgId, payload: m.payload })
      }
    }
    const out: Array<OutboxRows | null> = records.map((r) => (ours.has(r.email.id) ? [] : null))
    if (timeline.length === 0) return out
    const { rows } = await tx.query<{ id: string; subject: string; msgId: string; payload: unknown }>(
      EVENTS_SQL,
      [JSON.stringify(timeline), JSON.stringify(messages)],
    )
    for (const r of rows) out[owner.get(r.msgId)!]!.push({ ...r, id: BigInt(r.id) })
    return out
  })
}
