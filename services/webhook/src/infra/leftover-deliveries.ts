import type { Db } from '@mailer/db'
import { PENDING_BY_WEBHOOK } from './delivery-claim-sql.js'
import { DISABLED_REASON } from './delivery-store.js'
import { deleteWithPayloads } from './payload-deletes.js'

/**
 * Deliveries handled per statement when a webhook is disabled or deleted (as the pruner's chunks):
 * one statement over a whole backlog (300,000 rows and more) outlasted the 5 s limit of the
 * transaction it ran in, so the change answered 500 and was rolled back, every time.
 */
export const LEFTOVER_CHUNK = 1_000

/**
 * PATCH enabled:false — up to `chunk` pending deliveries (retries included) of the webhook created
 * up to `before` (those pending when it was disabled; one fanned out since it was enabled again is
 * left alone) fail now. Answers how many pending ones it found: fewer than `chunk`, none are left.
 * No HTTP answer goes with the reason, so the previous attempt's status code goes too (as when the
 * claim finds the webhook disabled): a 500 beside "webhook disabled" read as the receiver's. The
 * lease stays: it tells the claim holding the row apart from an older one whose lease ran out
 * under the same number, when the holder hands it back unsent (`unclaim`). A row another statement
 * holds (a claim committing) is waited for, then checked again (the outer `status`).
 */
export async function failPendingChunk(
  db: Pick<Db, '$queryRawUnsafe'>,
  webhookId: string,
  before: string,
  chunk = LEFTOVER_CHUNK,
): Promise<number> {
  const [row] = await db.$queryRawUnsafe<Array<{ seen: number }>>(
    `WITH c AS (
       SELECT d.id FROM webhook_deliveries d
       WHERE d.webhook_id = $1 AND ${PENDING_BY_WEBHOOK} AND d.created_at <= $3::timestamptz
       LIMIT $4
     ), u AS (
       UPDATE webhook_deliveries
       SET status = 'failed', response_code = NULL, response_body = $2, next_attempt_at = NULL,
           completed_at = now()
       WHERE status = 'pending' AND id IN (SELECT id FROM c)
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM c)::int AS seen, (SELECT count(*) FROM u)::int AS failed`,
    webhookId,
    DISABLED_REASON,
    before,
    chunk,
  )
  return row?.seen ?? 0
}

/**
 * A deleted webhook (its row already gone): up to `chunk` of its deliveries, and the payloads of
 * their events no other webhook of the project has a delivery of. Answers how many went.
 */
export function deleteChunk(db: Db, webhookId: string, projectId: string, chunk = LEFTOVER_CHUNK) {
  return db.$transaction(
    (tx) =>
      deleteWithPayloads(
        tx,
        projectId,
        'id IN (SELECT id FROM webhook_deliveries WHERE webhook_id = $1 LIMIT $3)',
        'x.webhook_id <> $1',
        [webhookId, chunk],
      ),
    // A chunk is small, but it may wait for rows a claim or another deleter holds.
    { timeout: 30_000 },
  )
}

/**
 * Disabled webhooks that still have pending deliveries, each with the time it was seen disabled
 * (what was created up to then was pending while it was disabled): left by a replica that stopped
 * between a disabling's commit and the end of its deliveries' failing.
 */
export function disabledWithPending(db: Db): Promise<Array<{ id: string; at: string }>> {
  return db.$queryRawUnsafe(
    `SELECT w.id, now()::text AS at FROM webhooks w
     WHERE NOT w.enabled
       AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.webhook_id = w.id AND ${PENDING_BY_WEBHOOK})`,
  )
}

/**
 * Webhooks that are gone but still have deliveries (a replica stopped between a deletion's commit
 * and the end of its deliveries' deleting), with their project. A delivery is only ever inserted
 * for a webhook that exists (the fan-out and the test route join or read it first), so none of a
 * webhook being created is taken for one. Found webhook by webhook (one descent of the index by
 * webhook per webhook with deliveries), whatever the number of deliveries.
 */
export function orphanedWebhooks(db: Db): Promise<Array<{ webhookId: string; projectId: string }>> {
  return db.$queryRawUnsafe(
    `WITH RECURSIVE ids(webhook_id) AS (
       (SELECT webhook_id FROM webhook_deliveries ORDER BY webhook_id LIMIT 1)
       UNION ALL
       SELECT (SELECT d.webhook_id FROM webhook_deliveries d WHERE d.webhook_id > i.webhook_id
               ORDER BY d.webhook_id LIMIT 1)
       FROM ids i WHERE i.webhook_id IS NOT NULL
     )
     SELECT i.webhook_id AS "webhookId",
            (SELECT d.project_id FROM webhook_deliveries d WHERE d.webhook_id = i.webhook_id LIMIT 1) AS "projectId"
     FROM ids i
     WHERE i.webhook_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM webhooks w WHERE w.id = i.webhook_id)`,
  )
}
