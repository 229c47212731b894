import { outboxCte, outboxRowsJson } from '@mailer/bus'
import { eventGroupsCte } from '@mailer/email-core'

/**
 * Everything accepted requests write: the emails (in idempotency-key order, so concurrent requests
 * sharing keys lock them in one order; ON CONFLICT DO NOTHING, so concurrent duplicates make one
 * email), and for the emails actually inserted their recipients, content, timeline events and
 * outbox rows. Each table gets one multi-row insert fed from a JSON parameter (whose records
 * leave out empty values, stored here as the columns' empty values: each byte of the parameters is
 * written by Node and parsed by PostgreSQL); an event comes as its payload alone (`vx` reads its
 * timeline columns from it and from its email, as timelineRow in @mailer/email-core sets them).
 * The foreign keys
 * hold because they are checked at the end of the statement. The queued emails inserted get their
 * dispatch messages here (`d`): one outbox row per $6 of them (subject $5, `{ emailIds }`, msgID
 * `<first id>:0`), not one per email.
 * A live email, or a broadcast's (whatever its mode), with a recipient on the suppression list is
 * not stored (`sx`, answered as `suppressed`): the accept path does not read the list before it
 * writes (accept.ts).
 */
const acceptCtes = (events: string) => `
WITH x AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(
    id text, project_id text, api_key_id text, mode text, source text, status text, from_address text,
    reply_to text[], "to" text[], cc text[], bcc text[], subject text, text_preview text, tags jsonb,
    template text, template_version int, track_opens boolean, track_clicks boolean, idempotency_key text,
    request_hash text, request_id text, broadcast_id text, contact_id text,
    created_at timestamptz, queued_at timestamptz, scheduled_at timestamptz, grp int)
), rx AS (
  SELECT * FROM jsonb_to_recordset($2::jsonb) AS rx(email_id text, address text, kind text, status text,
    last_event_at timestamptz)
), sx AS (
  SELECT rx.email_id, rx.address
  FROM rx JOIN x ON x.id = rx.email_id AND (x.mode = 'live' OR x.source = 'broadcast')
    JOIN suppressions s ON s.address = rx.address
), e AS (
  INSERT INTO emails (id, project_id, api_key_id, mode, source, status, from_address, reply_to, "to", cc, bcc,
    subject, text_preview, tags, template, template_version, track_opens, track_clicks, idempotency_key,
    request_hash, request_id, broadcast_id, contact_id, created_at, queued_at, scheduled_at)
  SELECT id, project_id, api_key_id, mode, source, status, from_address, coalesce(reply_to, '{}'),
    coalesce("to", '{}'), coalesce(cc, '{}'), coalesce(bcc, '{}'), subject, coalesce(text_preview, ''),
    coalesce(tags, '{}'), template, template_version, coalesce(track_opens, false),
    coalesce(track_clicks, false), idempotency_key, request_hash, request_id, broadcast_id, contact_id,
    created_at, queued_at, scheduled_at
  FROM x WHERE NOT EXISTS (SELECT 1 FROM sx WHERE sx.email_id = x.id)
  ORDER BY idempotency_key NULLS FIRST, id
  ON CONFLICT DO NOTHING
  RETURNING id
), r AS (
  INSERT INTO email_recipients (email_id, address, kind, status, last_event_at)
  SELECT rx.email_id, rx.address, rx.kind, coalesce(rx.status, 'queued'), rx.last_event_at
  FROM rx JOIN e ON e.id = rx.email_id
), c AS (
  INSERT INTO email_contents (email_id, html, text, headers, attachments, expires_at)
  SELECT c.email_id, c.html, c.text, coalesce(c.headers, '{}'), coalesce(c.attachments, '[]'), c.expires_at
  FROM jsonb_to_recordset($3::jsonb)
    AS c(email_id text, html text, text text, headers jsonb, attachments jsonb, expires_at timestamptz)
  JOIN e ON e.id = c.email_id
), vx AS (
  SELECT v.payload->>'id' AS id, x.project_id, x.id AS email_id, x.mode, v.payload->>'type' AS type,
    v.payload->'data'->>'recipient' AS recipient, v.payload,
    (v.payload->>'createdAt')::timestamptz AS created_at, v.published
  FROM jsonb_to_recordset($4::jsonb) AS v(payload jsonb, published boolean)
  JOIN x ON x.id = v.payload->'data'->>'emailId'
), v AS (
  INSERT INTO email_events (id, project_id, email_id, mode, type, recipient, payload, created_at)
  SELECT vx.id, vx.project_id, vx.email_id, vx.mode, vx.type, vx.recipient, vx.payload, vx.created_at
  FROM vx JOIN e ON e.id = vx.email_id
), ${events}, d AS (
  INSERT INTO outbox (subject, msg_id, payload)
  SELECT $5::text, min(q.id) || ':0', jsonb_build_object('emailIds', jsonb_agg(q.id ORDER BY q.id))
  FROM (SELECT x.id, (row_number() OVER (ORDER BY x.id) - 1) / $6::int AS chunk
        FROM x JOIN e ON e.id = x.id WHERE x.status = 'queued') q
  GROUP BY q.chunk
  RETURNING id, subject, msg_id, payload
)`

/**
 * What both statements answer: the inserted ids, the suppressed recipients of the emails left out
 * for them ([email id, address] pairs) and the outbox rows (to publish after the commit).
 */
const ACCEPT_RESULTS = `SELECT
  (SELECT coalesce(json_agg(id), '[]'::json) FROM e) AS inserted,
  (SELECT coalesce(json_agg(json_build_array(email_id, address)), '[]'::json) FROM sx) AS suppressed,
  ${outboxRowsJson('o', 'd')} AS outbox`

/**
 * The event messages of the published events ($4's `published`), as `eventMessage` in
 * @mailer/email-core builds them (`{ projectId, event }`, the event's id as msgID): the
 * one-statement write derives them here rather than receiving each event twice, as the
 * step-by-step statement does ($7).
 */
const PUBLISHED_EVENTS = `(SELECT vx.email_id, vx.id AS msg_id,
    jsonb_build_object('projectId', vx.project_id, 'event', vx.payload) AS payload
  FROM vx WHERE vx.published) AS ev`

/**
 * The rows alone; the limits are then counted by separate statements (accept-store.ts). Events
 * get an outbox row each here: the emails the limits refuse are taken back with their rows.
 */
export const INSERT_ACCEPTED_SQL = `${acceptCtes(outboxCte(7, 'e'))}
${ACCEPT_RESULTS}`

/**
 * The rows and the limits in one statement (one round trip, its own transaction): the inserted
 * emails are counted per project and window ($7: one record per group of requests sharing a
 * project and limits) and, if any group would pass its rate or daily limit,
 * mailer_send_limit_reached() raises ML429 and nothing of it stays; the caller then takes the
 * statement-by-statement path, which admits emails one by one. Its events go out in group
 * messages (eventGroupsCte), as they all stay or all go. The check is `admit` of
 * domain/limits.ts admitting every email: the rolling estimate (previous window weighted by what
 * still overlaps, rounded up, plus the current one) at most the rate limit, and the day's count at
 * most the daily limit (0: none). Counter rows are taken in (project, window) order, as the other
 * path takes them, so the two never deadlock.
 */
export const INSERT_AND_COUNT_SQL = `${acceptCtes(eventGroupsCte(PUBLISHED_EVENTS, 'e'))},
g AS (
  SELECT * FROM jsonb_to_recordset($7::jsonb) AS g(grp int, project_id text,
    prev_key text, prev_expires timestamptz, cur_key text, cur_expires timestamptz,
    day_key text, day_expires timestamptz, elapsed float8, rate_limit int, daily_limit int)
), n AS (
  SELECT g.grp, count(e.id)::int AS n
  FROM g LEFT JOIN x ON x.grp = g.grp LEFT JOIN e ON e.id = x.id
  GROUP BY g.grp
), w AS (
  SELECT project_id, "window", sum(add)::int AS add, max(expires_at) AS expires_at FROM (
    SELECT g.project_id, g.prev_key AS "window", 0 AS add, g.prev_expires AS expires_at FROM g
    UNION ALL SELECT g.project_id, g.cur_key, n.n, g.cur_expires FROM g JOIN n ON n.grp = g.grp
    UNION ALL SELECT g.project_id, g.day_key, n.n, g.day_expires FROM g JOIN n ON n.grp = g.grp
  ) t GROUP BY project_id, "window"
), cnt AS (
  INSERT INTO send_counters (project_id, "window", count, expires_at)
  SELECT project_id, "window", add, expires_at FROM w ORDER BY project_id, "window"
  ON CONFLICT (project_id, "window") DO UPDATE SET count = send_counters.count + EXCLUDED.count
  RETURNING project_id, "window", count
), over AS (
  SELECT g.grp FROM g
  LEFT JOIN cnt p ON p.project_id = g.project_id AND p."window" = g.prev_key
  LEFT JOIN cnt c ON c.project_id = g.project_id AND c."window" = g.cur_key
  LEFT JOIN cnt d ON d.project_id = g.project_id AND d."window" = g.day_key
  WHERE ceil(coalesce(p.count, 0) * (1 - g.elapsed)) + coalesce(c.count, 0) > g.rate_limit
     OR (g.daily_limit > 0 AND coalesce(d.count, 0) > g.daily_limit)
)
${ACCEPT_RESULTS},
  (SELECT mailer_send_limit_reached() FROM over LIMIT 1) AS over`

/** Takes back emails the limits did not admit: the rows, their events and their outbox rows. */
export const DELETE_REFUSED_SQL = `
WITH d AS (DELETE FROM emails WHERE id = ANY($1::text[])),
     v AS (DELETE FROM email_events WHERE email_id = ANY($1::text[]))
DELETE FROM outbox WHERE id = ANY($2::bigint[])`

/**
 * What the accept path reads before it writes when it reads first (a project near its limits, a
 * dry run; see accept.ts), for every request waiting at that moment, in one round trip: which
 * recipients are suppressed (the list is deployment-wide), which idempotency keys are taken
 * (project, key, namespace: a broadcast's keys are apart from the API's, as in the unique index
 * emails_project_id_idempotency_key_namespace_key) and the limit counters (project, window pairs).
 */
export const SEND_LOOKUPS_SQL = `
SELECT
  (SELECT coalesce(json_agg(address), '[]'::json) FROM suppressions WHERE address = ANY($1::text[])) AS suppressed,
  (SELECT coalesce(json_agg(json_build_object('projectId', e.project_id, 'id', e.id, 'mode', e.mode,
      'scheduledAt', e.scheduled_at, 'requestHash', e.request_hash, 'idempotencyKey', e.idempotency_key,
      'broadcast', k.broadcast)), '[]'::json)
   FROM unnest($2::text[], $3::text[], $4::boolean[]) AS k(project_id, key, broadcast)
   JOIN emails e ON e.project_id = k.project_id AND e.idempotency_key = k.key
     AND (e.broadcast_id IS NOT NULL) = k.broadcast) AS keyed,
  (SELECT coalesce(json_agg(json_build_object('projectId', c.project_id, 'window', c."window", 'count', c.count)), '[]'::json)
   FROM unnest($5::text[], $6::text[]) AS w(project_id, "window")
   JOIN send_counters c ON c.project_id = w.project_id AND c."window" = w."window") AS counters`
