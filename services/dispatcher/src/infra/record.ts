import { OUTBOX_ROWS_JSON, type OutboxRow, outboxRowsOf } from '@mailer/bus'
import { jsonColumn, type PgPool } from '@mailer/db'
import { buildEvent, type EmailSummary, eventGroupsCte, eventMessage, timelineRow } from '@mailer/email-core'
import type { ClaimedEmail } from '../domain/claimed-email.js'
import type { Plan } from '../domain/outcome.js'
import { claimHeldSql } from './claim-conditions.js'

export type OutboxRows = OutboxRow[]

/**
 * Every outcome of several attempts in one statement (one round trip, its own transaction):
 * - first the emails' rows are locked in id order (`l`), the order the tracking consumer's group
 *   write locks them in (services/email/src/infra/tracking-store.ts): updated in the parameter's
 *   order, an outcome write and an open of the same two emails could each hold one row and wait
 *   for the other until PostgreSQL broke the deadlock a second later, failing one of them. The
 *   ids come as an array: the planner knows an array's length, not a JSON document's (it assumed
 *   100 rows and read the whole table for them while the table was small);
 * - the emails, by primary key through `l`, guarded by the claim (status and claimed_at, written
 *   as claim-conditions.ts says): a dispatcher that lost its claim to another replica writes
 *   nothing for that email, and every other row below joins `u`, the emails actually updated;
 * - their recipients;
 * - new suppressions, in address order so two concurrent writes never take the same rows in
 *   opposite orders; an existing `manual` entry becomes `hard_bounce` with this email as its
 *   source (the stronger reason, as SuppressionStore.add ranks them: a manual entry added while
 *   the relay was being asked; one added before the claim kept the address from being sent
 *   to), a complaint or an earlier bounce is kept as it is (the first bounce stays the source).
 *   Once per address (the earliest email of the write is the source): an upsert that updates
 *   cannot meet its own row twice in one statement;
 * - the events on the timeline and, for live emails (never `email.test`), in the outbox: what
 *   recordEvents in @mailer/email-core does (timelineRow, eventMessage), the published ones in
 *   group messages (eventGroupsCte) rather than one message each.
 */
const RECORD_SQL = `
WITH l AS (
  SELECT e.id FROM emails e WHERE e.id = ANY($14::text[])
  ORDER BY e.id FOR NO KEY UPDATE
), u AS (
  UPDATE emails e SET
    status = v.status,
    next_attempt_at = v.next_attempt_at,
    claimed_at = NULL,
    sent_at = CASE WHEN v.sent THEN COALESCE(e.sent_at, v.at) ELSE e.sent_at END,
    delivered_at = CASE WHEN v.sent THEN COALESCE(e.delivered_at, v.at) ELSE e.delivered_at END,
    failed_at = CASE WHEN v.failed THEN COALESCE(e.failed_at, v.at) ELSE e.failed_at END,
    message_id = CASE WHEN v.sent THEN v.message_id ELSE e.message_id END,
    last_error = COALESCE(v.last_error, e.last_error)
  FROM l JOIN jsonb_to_recordset($1::jsonb) AS v(id text, status text, next_attempt_at timestamptz, sent boolean,
    at timestamptz, failed boolean, message_id text, last_error text, claimed_at timestamptz) ON v.id = l.id
  WHERE e.id = l.id AND ${claimHeldSql('e', 'v.claimed_at')}
  RETURNING e.id
), r AS (
  UPDATE email_recipients r SET
    status = v.status,
    smtp_status = v.smtp_status,
    smtp_response = v.smtp_response,
    delivery_ms = COALESCE(v.delivery_ms, r.delivery_ms),
    bounce_type = COALESCE(v.bounce_type, r.bounce_type),
    last_event_at = v.at
  FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::int[], $8::text[], $9::timestamptz[])
    AS v(email_id, address, status, smtp_status, smtp_response, delivery_ms, bounce_type, at)
    JOIN u ON u.id = v.email_id
  WHERE r.email_id = v.email_id AND r.address = v.address
), s AS (
  INSERT INTO suppressions (address, reason, source_email_id)
  SELECT DISTINCT ON (v.a) v.a, 'hard_bounce', v.e FROM unnest($10::text[], $11::text[]) AS v(a, e) JOIN u ON u.id = v.e
  ORDER BY v.a, v.e
  ON CONFLICT (address) DO UPDATE SET reason = EXCLUDED.reason, source_email_id = EXCLUDED.source_email_id
    WHERE suppressions.reason = 'manual'
), t AS (
  INSERT INTO email_events (id, project_id, email_id, mode, type, recipient, payload, created_at)
  SELECT x.id, x.project_id, x.email_id, x.mode, x.type, x.recipient, x.payload, x.created_at
  FROM jsonb_to_recordset($12::jsonb) AS x(id text, project_id text, email_id text, mode text, type text,
    recipient text, payload jsonb, created_at timestamptz)
  JOIN u ON u.id = x.email_id
), ${eventGroupsCte(13, 'u')}
SELECT
  (SELECT coalesce(json_agg(id), '[]'::json) FROM u) AS ours,
  ${OUTBOX_ROWS_JSON} AS outbox`

/** One attempt's outcome to record. */
export interface AttemptRecord {
  email: ClaimedEmail
  plan: Plan
  messageId: string
}

/**
 * Writes the outcomes of several attempts (one per email) in one statement (RECORD_SQL). Answers,
 * per attempt in order, the outbox rows to publish after the commit (the group messages of all
 * of them go with the first attempt still ours, so they are published once), or null when the
 * claim was no longer ours (nothing written for that email). Concurrent attempts are combined by a
 * GroupCommit in the dispatch handler: one commit for many emails instead of one each.
 */
export async function recordOutcomes(
  pool: PgPool,
  records: AttemptRecord[],
): Promise<Array<OutboxRows | null>> {
  const recipients = records.flatMap(({ email, plan }) =>
    // Not `{ ...r, emailId, at }`: V8 builds a spread followed by more properties on a slow path.
    plan.recipients.map((r) => ({ r, emailId: email.id, at: plan.at })),
  )
  const suppress = records.flatMap(({ email, plan }) => plan.suppress.map((a) => ({ a, e: email.id })))
  const timeline: unknown[] = []
  const messages: Array<{ email_id: string; msg_id: string; payload: unknown }> = []
  for (const { email, plan } of records) {
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
      if (m !== null) messages.push({ email_id: email.id, msg_id: m.msgId, payload: m.payload })
    }
  }
  // Through plain pg: Prisma costs ~1.5 ms of CPU per statement, and this runs for every email.
  const {
    rows: [row],
  } = await pool.query<{ ours: unknown; outbox: unknown }>(RECORD_SQL, [
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
    recipients.map((r) => r.emailId),
    recipients.map((x) => x.r.address),
    recipients.map((x) => x.r.status),
    recipients.map((x) => x.r.smtpStatus),
    recipients.map((x) => x.r.smtpResponse),
    recipients.map((x) => x.r.deliveryMs),
    recipients.map((x) => x.r.bounceType),
    recipients.map((r) => r.at),
    suppress.map((x) => x.a),
    suppress.map((x) => x.e),
    JSON.stringify(timeline),
    JSON.stringify(messages),
    records.map((r) => r.email.id),
  ])
  const ours = new Set(jsonColumn<string[]>(row?.ours ?? []))
  const out: Array<OutboxRows | null> = records.map((r) => (ours.has(r.email.id) ? [] : null))
  const rows = outboxRowsOf(row?.outbox)
  if (rows.length) out.find((o) => o !== null)?.push(...rows)
  return out
}
