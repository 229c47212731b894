import { EVENT_GROUP_MAX, SUBJECTS } from '@mailer/contracts'

/**
 * For hot paths that write their events inside one larger statement (the accept, the
 * dispatcher's outcomes): a CTE `o` turning the event messages of JSON parameter `$param`
 * (records of email_id, msg_id, payload, as `eventMessage` builds them) whose email is in CTE
 * `written` into group messages (EventGroupMessage): up to EVENT_GROUP_MAX events per outbox row,
 * in event id order (ids are monotonic: creation order), subject `events.group`, msg_id
 * `g:<first event id>`. Read the rows back with `outboxRowsJson('o')`.
 */
export const eventGroupsCte = (param: number, written: string): string => `o AS (
  INSERT INTO outbox (subject, msg_id, payload)
  SELECT '${SUBJECTS.eventGroup}', 'g:' || min(q.msg_id),
         jsonb_build_object('events', jsonb_agg(q.payload ORDER BY q.msg_id))
  FROM (SELECT ev.msg_id, ev.payload,
               (row_number() OVER (ORDER BY ev.msg_id) - 1) / ${EVENT_GROUP_MAX} AS chunk
        FROM jsonb_to_recordset($${param}::jsonb) AS ev(email_id text, msg_id text, payload jsonb)
        JOIN ${written} ON ${written}.id = ev.email_id) q
  GROUP BY q.chunk
  RETURNING id, subject, msg_id, payload
)`
