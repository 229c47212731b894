import { inTransaction, type PgPool } from '@mailer/db'
import { buildEvent, type EmailSummary, eventMessage, timelineRow } from '@mailer/email-core'
import type { ClaimedEmail } from '../domain/claimed-email.js'
import type { Plan } from '../domain/outcome.js'

export type OutboxRows = Array<{ id: bigint; subject: string; msgId: string; payload: unknown }>

// Guarded by the claim (status and claimed_at): a dispatcher that lost its claim to another
// replica writes nothing.
const EMAIL_SQL = `
UPDATE emails SET
  status = $2,
  next_attempt_at = $3::timestamptz,
  claimed_at = NULL,
  sent_at = CASE WHEN $4::boolean THEN COALESCE(sent_at, $5::timestamptz) ELSE sent_at END,
  delivered_at = CASE WHEN $4::boolean THEN COALESCE(delivered_at, $5::timestamptz) ELSE delivered_at END,
  failed_at = CASE WHEN $6::boolean THEN COALESCE(failed_at, $5::timestamptz) ELSE failed_at END,
  message_id = CASE WHEN $4::boolean THEN $7 ELSE message_id END,
  last_error = COALESCE($8, last_error)
WHERE id = $1 AND status = 'sending' AND claimed_at = $9::timestamptz`

const RECIPIENTS_SQL = `
UPDATE email_recipients r SET
  status = v.status,
  smtp_status = v.smtp_status,
  smtp_response = v.smtp_response,
  delivery_ms = COALESCE(v.delivery_ms, r.delivery_ms),
  bounce_type = COALESCE(v.bounce_type, r.bounce_type),
  last_event_at = $8::timestamptz
FROM unnest($2::text[], $3::text[], $4::int[], $5::text[], $6::int[], $7::text[])
  AS v(address, status, smtp_status, smtp_response, delivery_ms, bounce_type)
WHERE r.email_id = $1 AND r.address = v.address`

// A suppression that exists is kept as it is: a complaint or manual entry is never downgraded
// to a hard bounce, and the first bounce stays the source.
const SUPPRESS_SQL = `
INSERT INTO suppressions (address, reason, source_email_id)
SELECT a, 'hard_bounce', $2 FROM unnest($1::text[]) AS a
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

/**
 * Writes every outcome of one attempt in one transaction: the email, its recipients, new
 * suppressions and the events (timeline rows plus outbox rows). Returns the outbox rows to
 * publish after the commit, or null when the claim was no longer ours (nothing written).
 */
export async function recordOutcome(
  pool: PgPool,
  email: ClaimedEmail,
  plan: Plan,
  messageId: string,
): Promise<OutboxRows | null> {
  const now = plan.at
  const summary: EmailSummary = {
    id: email.id,
    projectId: email.projectId,
    mode: email.mode,
    from: email.from,
    subject: email.subject,
    tags: email.tags,
  }
  // Through plain pg: Prisma costs ~1.5 ms of CPU per statement, and this runs for every email.
  return inTransaction(pool, async (tx) => {
    const updated = await tx.query(EMAIL_SQL, [
      email.id,
      plan.status,
      plan.nextAttemptAt,
      plan.sent,
      now,
      plan.failed,
      messageId,
      plan.lastError,
      email.claimedAt,
    ])
    if (updated.rowCount === 0) return null
    const rs = plan.recipients
    if (rs.length) {
      await tx.query(RECIPIENTS_SQL, [
        email.id,
        rs.map((r) => r.address),
        rs.map((r) => r.status),
        rs.map((r) => r.smtpStatus),
        rs.map((r) => r.smtpResponse),
        rs.map((r) => r.deliveryMs),
        rs.map((r) => r.bounceType),
        now,
      ])
    }
    if (plan.suppress.length) await tx.query(SUPPRESS_SQL, [plan.suppress, email.id])
    const events = plan.events.map((e) => buildEvent(summary, { ...e, at: now }))
    if (events.length === 0) return []
    const messages = events.map((e) => eventMessage(summary, e)).filter((m) => m !== null)
    const { rows } = await tx.query<{ id: string; subject: string; msgId: string; payload: unknown }>(
      EVENTS_SQL,
      [
        JSON.stringify(events.map((e) => timelineRow(summary, e))),
        JSON.stringify(messages.map((m) => ({ subject: m.subject, msg_id: m.msgId, payload: m.payload }))),
      ],
    )
    return rows.map((r) => ({ ...r, id: BigInt(r.id) }))
  })
}
