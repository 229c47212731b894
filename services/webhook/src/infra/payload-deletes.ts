import type { Db } from '@mailer/db'

export type PayloadTx = Pick<Db, '$executeRawUnsafe' | '$queryRawUnsafe'>

/**
 * Every deleter of deliveries (deleting a webhook, the pruner, a delivery whose webhook is gone):
 * the deliveries `which` picks, and the stored payloads of their events that no other delivery of
 * the project ($2) still needs (`others` tells the deleted rows apart: the statement still sees
 * them; an event's deliveries are all in its project, found through the unique (webhook_id,
 * event_id) index). Answers how many deliveries went. A per-project lock taken first serializes
 * the deleters: two at once would each still see the other's deliveries and both keep a payload
 * neither needs; taken first in the transaction, so that its statement sees what the other one
 * committed. `which` uses $1 and any parameters after `projectId` ($3, ...).
 */
export async function deleteWithPayloads(
  tx: PayloadTx,
  projectId: string,
  which: string,
  others: string,
  [first, ...rest]: unknown[],
): Promise<number> {
  await tx.$executeRawUnsafe(
    'SELECT pg_advisory_xact_lock(hashtext($1)::bigint)',
    `webhook-payloads:${projectId}`,
  )
  const rows = await tx.$queryRawUnsafe<Array<{ n: number }>>(
    `WITH d AS (DELETE FROM webhook_deliveries WHERE ${which} RETURNING id, event_id),
     p AS (
       DELETE FROM webhook_payloads wp
       WHERE wp.event_id IN (SELECT event_id FROM d)
         AND NOT EXISTS (
           SELECT 1 FROM webhooks w JOIN webhook_deliveries x ON x.webhook_id = w.id AND x.event_id = wp.event_id
           WHERE w.project_id = $2 AND ${others}))
     SELECT count(*)::int AS n FROM d`,
    first,
    projectId,
    ...rest,
  )
  return rows[0]?.n ?? 0
}
