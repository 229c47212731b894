import { jsonColumn } from '@mailer/db'
import type { OutboxMessage } from './outbox.js'

/** An outbox row as written: what `Outbox.publish` takes after the commit. */
export type OutboxRow = OutboxMessage & { id: bigint }

/**
 * For hot paths that write their outbox rows inside one larger statement (the accept and the
 * dispatcher's outcome): a CTE `o` inserting the rows of JSON parameter `$param` (records of
 * email_id, subject, msg_id, payload) whose email is in CTE `written` (its `id` column), so an
 * email that was not written gets no message.
 */
export const outboxCte = (param: number, written: string): string => `o AS (
  INSERT INTO outbox (subject, msg_id, payload)
  SELECT o.subject, o.msg_id, o.payload
  FROM jsonb_to_recordset($${param}::jsonb) AS o(email_id text, subject text, msg_id text, payload jsonb)
  JOIN ${written} ON ${written}.id = o.email_id
  RETURNING id, subject, msg_id, payload
)`

/** The rows the given outbox CTEs wrote, as one JSON array column (read back with `outboxRowsOf`). */
export const outboxRowsJson = (...ctes: [string, ...string[]]): string => {
  const from = ctes.map((c) => `SELECT id, subject, msg_id, payload FROM ${c}`)
  return `(SELECT coalesce(json_agg(json_build_object('id', id::text, 'subject', subject,
    'msgId', msg_id, 'payload', payload)), '[]'::json) FROM (${from.join(' UNION ALL ')}) written)`
}

/** The rows `o` wrote, as one JSON array column. */
export const OUTBOX_ROWS_JSON = outboxRowsJson('o')

/** Parses that column. */
export function outboxRowsOf(column: unknown): OutboxRow[] {
  return (jsonColumn<Array<OutboxMessage & { id: string }> | null>(column) ?? []).map((r) => ({
    ...r,
    id: BigInt(r.id),
  }))
}
