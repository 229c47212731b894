import type { PgPool } from '@mailer/db'
import { type ClaimedEmail, type ClaimedRecipient, releasedStatus } from '../domain/claimed-email.js'
import { claimableSql } from './claim-conditions.js'

export type ClaimResult =
  | { kind: 'claimed'; email: ClaimedEmail }
  /** Another dispatcher holds a fresh claim: look again once it could have gone stale. */
  | { kind: 'busy'; retryInMs: number }
  /** Nothing to do: canceled, already final, waiting for its retry time, or unknown. */
  | { kind: 'skip'; status: string | null }

interface ClaimRow {
  id: string
  requestId: string | null
  projectId: string
  mode: string
  from: string
  replyTo: string[] | null
  to: string[] | null
  cc: string[] | null
  bcc: string[] | null
  subject: string
  tags: Record<string, string> | null
  trackOpens: boolean
  trackClicks: boolean
  attempts: number
  claimedAt: Date
  sentAt: Date | null
  createdAt: Date
  dueAt: Date
  hasContent: boolean
  html: string | null
  text: string | null
  headers: unknown
  attachments: unknown
  recipients: ClaimedRecipient[]
}

// One round trip: take the email (a queued or deferred one whose retry is due and published, or
// a `sending` one whose dispatcher died: its claim is older than the ack wait) and read what is
// needed to send it. The row lock makes the claim exclusive across replicas.
// The state test is a CASE so that the rows are found by primary key only (claim-conditions.ts).
// A recipient's reply is read only when it is `failed` (planOutcome names it in `email.failed`):
// the others' replies would only lengthen every claim's JSON. The suppression list is read again
// for the recipients still waiting (one primary-key probe each, in the same round trip): an
// address listed since the email was accepted (a bounce elsewhere, a complaint, an operator) is
// not sent to. Content past its `expires_at` counts as gone, as the API answers content_expired
// for it, whether or not the purge (every 60 s, none while the email service is down) removed it.
const CLAIM_SQL = `
WITH claimed AS (
  UPDATE emails SET status = 'sending', claimed_at = now(), attempts = attempts + 1
  WHERE id = ANY($1::text[]) AND ${claimableSql('$2')}
  RETURNING id, request_id, project_id, mode, from_address, reply_to, "to", cc, bcc, subject, tags,
            track_opens, track_clicks, attempts, claimed_at, sent_at, created_at, scheduled_at
)
SELECT c.id, c.request_id AS "requestId", c.project_id AS "projectId", c.mode, c.from_address AS "from", c.reply_to AS "replyTo",
       c."to", c.cc, c.bcc, c.subject, c.tags, c.track_opens AS "trackOpens",
       c.track_clicks AS "trackClicks", c.attempts, c.claimed_at AS "claimedAt", c.sent_at AS "sentAt",
       c.created_at AS "createdAt", GREATEST(c.created_at, c.scheduled_at) AS "dueAt", ec.email_id IS NOT NULL AS "hasContent", ec.html, ec.text,
       ec.headers, ec.attachments,
       COALESCE((SELECT json_agg(json_build_object('address', r.address, 'kind', r.kind, 'status', r.status,
                                   'smtpResponse', CASE WHEN r.status = 'failed' THEN r.smtp_response END,
                                   'suppressed', s.reason)
                                 ORDER BY r.address)
                 FROM email_recipients r
                 LEFT JOIN suppressions s ON s.address = r.address AND r.status IN ('queued', 'sent', 'deferred')
                 WHERE r.email_id = c.id), '[]'::json) AS recipients
FROM claimed c LEFT JOIN email_contents ec ON ec.email_id = c.id AND ec.expires_at > now()`

const STATE_SQL = `
SELECT id, status,
       GREATEST(0, EXTRACT(EPOCH FROM (claimed_at + make_interval(secs => $2::float8) - now())) * 1000)::float8 AS "waitMs"
FROM emails WHERE id = ANY($1::text[])`

/**
 * Claims several emails in one round trip (the dispatch handler combines concurrent claims with a
 * GroupCommit): one result per id, in order. An id asked for twice in one call is claimed once;
 * the other asks are answered `busy`, as a claim held by another dispatcher would be.
 * Through plain pg: a Prisma raw query costs ~1.5 ms of CPU more per call (bench/README.md).
 */
export async function claimEmails(
  pool: PgPool,
  emailIds: string[],
  staleAfterSeconds: number,
): Promise<ClaimResult[]> {
  const unique = [...new Set(emailIds)]
  const { rows } = await pool.query<ClaimRow>(CLAIM_SQL, [unique, staleAfterSeconds])
  const claimed = new Map(rows.map((r) => [r.id, r]))
  const rest = unique.filter((id) => !claimed.has(id))
  const states = new Map<string, { status: string; waitMs: number | null }>()
  if (rest.length) {
    const { rows: state } = await pool.query<{ id: string; status: string; waitMs: number | null }>(
      STATE_SQL,
      [rest, staleAfterSeconds],
    )
    for (const s of state) states.set(s.id, s)
  }
  const given = new Set<string>()
  return emailIds.map((id): ClaimResult => {
    const r = claimed.get(id)
    if (r && !given.has(id)) {
      given.add(id)
      return { kind: 'claimed', email: toClaimedEmail(r) }
    }
    if (r) return { kind: 'busy', retryInMs: staleAfterSeconds * 1000 + 500 }
    const s = states.get(id)
    if (s?.status === 'sending') return { kind: 'busy', retryInMs: Math.ceil(s.waitMs ?? 0) + 500 }
    return { kind: 'skip', status: s?.status ?? null }
  })
}

function toClaimedEmail(r: ClaimRow): ClaimedEmail {
  return {
    id: r.id,
    requestId: r.requestId,
    projectId: r.projectId,
    mode: r.mode,
    from: r.from,
    replyTo: r.replyTo ?? [],
    to: r.to ?? [],
    cc: r.cc ?? [],
    bcc: r.bcc ?? [],
    subject: r.subject,
    tags: r.tags ?? {},
    trackOpens: r.trackOpens,
    trackClicks: r.trackClicks,
    attempts: r.attempts,
    claimedAt: r.claimedAt,
    sentAt: r.sentAt,
    createdAt: r.createdAt,
    dueAt: r.dueAt,
    content: r.hasContent
      ? { html: r.html, text: r.text, headers: r.headers, attachments: r.attachments }
      : null,
    recipients: r.recipients,
  }
}

/**
 * Gives a claim back unused: the dispatcher is stopping and the message never reached the relay
 * (SendAborted). The email is claimable again at once (no retry time) and the claim's attempt is
 * taken back: nothing was tried, so a rollout never uses up an email's retries. Guarded by the
 * fencing token like an outcome; answers whether the claim was still ours.
 */
export async function releaseClaim(pool: PgPool, email: ClaimedEmail): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE emails SET status = $3, claimed_at = NULL, attempts = attempts - 1
     WHERE id = $1 AND status = 'sending' AND claimed_at = $2::timestamptz`,
    [email.id, email.claimedAt, releasedStatus(email)],
  )
  return rowCount === 1
}
