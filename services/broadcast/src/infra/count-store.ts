import { type Db, jsonColumn } from '@mailer/db'
import type { CountedBroadcast } from '../domain/count-schedule.js'

type Sql = Pick<Db, '$queryRawUnsafe' | '$executeRawUnsafe'>

/** A broadcast whose counts a refresher took to recount, with what schedules its next recount. */
export interface CountClaim extends CountedBroadcast {
  id: string
  /** Its `due_at` as the claim wrote it: the lease, and the token the recount's write must find. */
  lease: string
}

const ms = (n: number) => `($${n}::float8 * interval '1 millisecond')`

/**
 * One broadcast's email count by status, as a jsonb object: its emails kept plus those the email
 * service's pruner deleted (pruned_email_counts, written by the statement that deleted them), in
 * one statement so that a prune between the two reads is counted once. An index-only scan of the
 * broadcast's emails (emails_broadcast_id_status_idx): one broadcast's size, never a page's.
 */
const COUNTED = `COALESCE((SELECT jsonb_object_agg(status, n) FROM (
    SELECT status, sum(n)::int AS n FROM (
      SELECT status, count(*) AS n FROM emails WHERE broadcast_id = $1 GROUP BY status
      UNION ALL
      SELECT status, count AS n FROM pruned_email_counts WHERE broadcast_id = $1
    ) x GROUP BY status) y), '{}'::jsonb)`

/**
 * The stored email counts of broadcasts (table broadcast_email_counts): what list and get answer,
 * recounted in the background by the refresher (count-refresher.ts) and by the sender as it
 * finishes a broadcast. A recount is one statement of one broadcast; `due_at` is both when it is
 * due and, while a refresher recounts it, that refresher's lease (pushed past the recount's end):
 * other replicas skip it, and the recount's write is conditional on it, so a recount that outlived
 * its lease (another replica took it over, or the sender recounted meanwhile) writes nothing.
 */
export class CountStore {
  constructor(private readonly db: Sql) {}

  /**
   * Takes the broadcast whose counts are due first (FOR UPDATE SKIP LOCKED: replicas never take the
   * same one), pushing its `due_at` `leaseMs` ahead: it is this replica's until then, and tried
   * again then if the recount fails. Null when none is due.
   */
  async claimDue(leaseMs: number): Promise<CountClaim | null> {
    const [row] = await this.db.$queryRawUnsafe<CountClaim[]>(
      `WITH due AS (
         SELECT broadcast_id FROM broadcast_email_counts WHERE due_at <= now()
         ORDER BY due_at LIMIT 1 FOR UPDATE SKIP LOCKED)
       UPDATE broadcast_email_counts c SET due_at = now() + ${ms(1)}
       FROM due LEFT JOIN broadcasts b ON b.id = due.broadcast_id
       WHERE c.broadcast_id = due.broadcast_id
       RETURNING c.broadcast_id AS id, c.due_at::text AS lease, b.status, b.scheduled_at AS "scheduledAt",
         CASE WHEN b.status = 'sent' THEN b.completed_at WHEN b.status = 'canceled' THEN b.updated_at END
           AS "finishedAt"`,
      leaseMs,
    )
    return row ?? null
  }

  /** Recounts a claimed broadcast and schedules its next recount `nextMs` ahead; false: lease lost. */
  async recount(c: CountClaim, nextMs: number): Promise<boolean> {
    const n = await this.db.$executeRawUnsafe(
      `UPDATE broadcast_email_counts SET counts = ${COUNTED}, counted_at = now(), due_at = now() + ${ms(3)}
       WHERE broadcast_id = $1 AND due_at = $2::timestamptz`,
      c.id,
      c.lease,
      nextMs,
    )
    return n > 0
  }

  /**
   * Recounts a broadcast now, whoever holds it (its sender, as it finishes it: a broadcast read
   * `sent` carries every email it sent), and makes the next recount due `nextMs` ahead. A
   * refresher's recount in flight then finds its lease gone and writes nothing older over this.
   * Creates the row of a broadcast that had none (marked sent by a replica older than the table).
   */
  async recountNow(id: string, nextMs: number): Promise<void> {
    await this.db.$executeRawUnsafe(
      `INSERT INTO broadcast_email_counts (broadcast_id, counts, counted_at, due_at)
       SELECT $1, ${COUNTED}, now(), now() + ${ms(2)}
       ON CONFLICT (broadcast_id) DO UPDATE
         SET counts = excluded.counts, counted_at = excluded.counted_at, due_at = excluded.due_at`,
      id,
      nextMs,
    )
  }

  /**
   * Gives a row, due now, to every broadcast past draft that has none: those marked sent by a
   * replica of a version before the table, during a rolling upgrade (this version creates the row
   * as it marks a draft sent, and the migration created those of broadcasts sent before it). One
   * pass over broadcasts, not over emails. Answers how many it adopted.
   */
  async adoptMissing(): Promise<number> {
    return this.db.$executeRawUnsafe(
      `INSERT INTO broadcast_email_counts (broadcast_id, due_at)
       SELECT b.id, now() FROM broadcasts b
       WHERE b.status <> 'draft'
         AND NOT EXISTS (SELECT 1 FROM broadcast_email_counts c WHERE c.broadcast_id = b.id)
       ON CONFLICT (broadcast_id) DO NOTHING`,
    )
  }
}

/**
 * The stored counts of these broadcasts, by id (a primary-key read of one row each). A broadcast
 * never counted yet has `{}`: a draft (no emails), or one sent before the table existed and not
 * reached by a refresher yet (docs/api.md).
 */
export async function storedCounts(
  db: Sql,
  ids: readonly string[],
): Promise<Map<string, Record<string, number>>> {
  const out = new Map<string, Record<string, number>>(ids.map((id) => [id, {}]))
  if (ids.length === 0) return out
  const rows = await db.$queryRawUnsafe<Array<{ id: string; counts: unknown }>>(
    'SELECT broadcast_id AS id, counts FROM broadcast_email_counts WHERE broadcast_id = ANY($1::text[])',
    [...ids],
  )
  for (const r of rows) out.set(r.id, jsonColumn<Record<string, number>>(r.counts))
  return out
}
