import { EVENT_GROUP_MAX, EVENT_GROUP_MAX_BYTES, SUBJECTS } from '@mailer/contracts'

/**
 * For hot paths that write their events inside one larger statement (the accept, the
 * dispatcher's outcomes, the opens and clicks): a CTE `o` turning the event messages of JSON
 * parameter `$param` (records of email_id, msg_id, payload, as `eventMessage` builds them) that
 * CTE `written` names (its `id` column: the email's by default; with `by` = 'msg_id' the event's
 * own, for a writer whose events may exist already, so only those just added are announced) into
 * group messages (EventGroupMessage): up to EVENT_GROUP_MAX events and about
 * EVENT_GROUP_MAX_BYTES per outbox row (a new group starts where the running size crosses a
 * multiple of it), in event id order (ids are monotonic: creation order), subject
 * `events.group`, msg_id `g:<first event id>`. Read the rows back with `outboxRowsJson('o')`.
 * `param` may instead be a FROM item giving those three columns as `ev` (a writer that derives
 * the messages from rows it already has in the statement, rather than sending them twice).
 */
export const eventGroupsCte = (
  param: number | string,
  written: string,
  by: 'email_id' | 'msg_id' = 'email_id',
): string => `o AS (
  INSERT INTO outbox (subject, msg_id, payload)
  SELECT '${SUBJECTS.eventGroup}', 'g:' || min(q.msg_id),
         jsonb_build_object('events', jsonb_agg(q.payload ORDER BY q.msg_id))
  FROM (SELECT ev.msg_id, ev.payload,
               (row_number() OVER w - 1) / ${EVENT_GROUP_MAX} AS chunk,
               (sum(octet_length(ev.payload::text)) OVER w - 1) / ${EVENT_GROUP_MAX_BYTES} AS part
        FROM ${typeof param === 'string' ? param : `jsonb_to_recordset($${param}::jsonb) AS ev(email_id text, msg_id text, payload jsonb)`}
        JOIN ${written} ON ${written}.id = ev.${by}
        WINDOW w AS (ORDER BY ev.msg_id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)) q
  GROUP BY q.chunk, q.part
  RETURNING id, subject, msg_id, payload
)`
