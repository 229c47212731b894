import { type EventPayload, newId } from '@mailer/contracts'
import { type Db, GroupCommit, type PgPool } from '@mailer/db'
import type { DeliveryRow } from '../domain/records.js'
import type { NextStep } from '../domain/retry-schedule.js'
import { CLAIM_SQL } from './delivery-claim-sql.js'
import { FAIL_UNSENT_SQL, FINISH_SQL, RELEASE_DISABLED_SQL, UNCLAIM_SQL } from './delivery-outcome-sql.js'
import type { SendResult } from './http-sender.js'
import { deleteWithPayloads } from './payload-deletes.js'

/** A delivery claimed for one attempt, with its webhook as it is now (null fields: webhook gone). */
export interface ClaimedDelivery {
  id: string
  webhookId: string
  /** The delivery's project (its webhook's, even when the webhook is gone). */
  projectId: string
  eventId: string
  attempt: number
  /** The lease's end as PostgreSQL wrote it: tells this claim apart from a later one of the row. */
  lease: string
  payload: unknown
  url: string | null
  secret: string | null
  enabled: boolean | null
}

const DELIVERY_COLUMNS = `id, webhook_id AS "webhookId", event_id AS "eventId", event_type AS "eventType", attempt, status,
  response_code AS "responseCode", response_body AS "responseBody", next_attempt_at AS "nextAttemptAt",
  created_at AS "createdAt", completed_at AS "completedAt"`

interface FanoutInsert {
  projectId: string
  event: EventPayload
  webhookIds: string[]
}

interface AttemptResult {
  d: Claim
  result: SendResult
  step: NextStep
}

/** What identifies one claim of a delivery. */
type Claim = Pick<ClaimedDelivery, 'id' | 'attempt' | 'lease'>

/** The response body of a delivery its webhook's disabling failed (no HTTP answer goes with it). */
export const DISABLED_REASON = 'webhook disabled'

/** SQL of the `webhook_deliveries` table: fan-out inserts, the claim loop, attempt results. */
export class DeliveryStore {
  // The per-delivery writes are group-committed: those arriving while a write is in flight go in
  // one statement (one commit), which is what lets fan-out grow with concurrency. A second write
  // at once only when 100 wait (extraSlotAt): two concurrent ones split each group and doubled the
  // statements (fan-out +29 to +41 %, 22-29 % less CPU per delivery: bench/README.md).
  private readonly inserts = new GroupCommit((reqs: FanoutInsert[]) => this.insertMany(reqs), {
    slots: 2,
    maxItems: 500,
    sizeOf: (r) => r.webhookIds.length,
    extraSlotAt: 100,
  })
  private readonly results = new GroupCommit((reqs: AttemptResult[]) => this.finishMany(reqs), {
    slots: 2,
    maxItems: 500,
    extraSlotAt: 100,
  })

  /**
   * `pool` serves the hot path (fan-out insert, claim, finish): a Prisma raw query costs ~1.5 ms
   * of CPU more than the same query through plain pg, which capped fan-out (bench/README.md).
   */
  constructor(
    private readonly db: Db,
    private readonly pool: PgPool | null = null,
  ) {}

  private async rows<T>(sql: string, params: unknown[]): Promise<T[]> {
    if (this.pool) return (await this.pool.query(sql, params)).rows as T[]
    return this.db.$queryRawUnsafe<T[]>(sql, ...params)
  }

  /**
   * One pending delivery for every matching webhook of an event; the unique (webhook_id,
   * event_id) makes a redelivered event a no-op. The event's payload is stored once, in
   * webhook_payloads, not in each delivery. Returns how many deliveries were new.
   */
  insertForEvent(projectId: string, event: EventPayload, webhookIds: string[]): Promise<number> {
    return this.inserts.submit({ projectId, event, webhookIds })
  }

  /**
   * Several events' deliveries in one multi-row insert, and the payloads of the events that got
   * one. The join drops webhooks disabled or deleted since the caller's cached list was loaded,
   * and webhooks of another project.
   */
  private async insertMany(reqs: FanoutInsert[]): Promise<number[]> {
    const ids: string[] = []
    const webhookIds: string[] = []
    const projectIds: string[] = []
    const events: number[] = []
    /** Which request each new delivery id belongs to. */
    const owner = new Map<string, number>()
    for (const [i, r] of reqs.entries())
      for (const w of r.webhookIds) {
        const id = newId('delivery')
        owner.set(id, i)
        ids.push(id)
        webhookIds.push(w)
        projectIds.push(r.projectId)
        events.push(i)
      }
    const inserted = await this.rows<{ id: string }>(
      `WITH e AS (
         SELECT e.event, e.n FROM jsonb_array_elements($5::jsonb) WITH ORDINALITY AS e(event, n)
       ), ins AS (
         INSERT INTO webhook_deliveries (id, webhook_id, project_id, event_id, event_type, attempt, status, next_attempt_at, created_at)
         SELECT v.id, w.id, w.project_id, e.event->>'id', e.event->>'type', 0, 'pending', now(), now()
         FROM unnest($1::text[], $2::text[], $3::text[], $4::int[]) AS v(id, webhook_id, project_id, i)
         JOIN e ON e.n = v.i + 1
         JOIN webhooks w ON w.id = v.webhook_id AND w.enabled AND w.project_id = v.project_id
         ON CONFLICT (webhook_id, event_id) DO NOTHING
         RETURNING id, event_id
       ), p AS (
         INSERT INTO webhook_payloads (event_id, payload)
         SELECT e.event->>'id', e.event FROM e WHERE e.event->>'id' IN (SELECT event_id FROM ins)
         ON CONFLICT (event_id) DO NOTHING
       )
       SELECT id FROM ins`,
      [ids, webhookIds, projectIds, events, JSON.stringify(reqs.map((r) => r.event))],
    )
    const counts = reqs.map(() => 0)
    for (const r of inserted) counts[owner.get(r.id)!]!++
    return counts
  }

  /** A single delivery due now (the test route); its synthetic event's payload stays in the row. */
  async insertOne(webhookId: string, projectId: string, event: EventPayload): Promise<string> {
    const id = newId('delivery')
    await this.db.$executeRawUnsafe(
      `INSERT INTO webhook_deliveries (id, webhook_id, project_id, event_id, event_type, payload, attempt, status, next_attempt_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, 0, 'pending', now(), now())`,
      id,
      webhookId,
      projectId,
      event.id,
      event.type,
      JSON.stringify(event),
    )
    return id
  }

  /**
   * Claims up to `limit` due deliveries for one attempt each: a lease (`locked_until`) so other
   * replicas skip them and a crashed replica's claims come back, and `attempt + 1`, except for a
   * row whose last claim's lease ran out with no outcome recorded (a finish or a hand-back clears
   * the lease): that claim's number is used again. A replica killed with deliveries claimed ahead
   * in its memory had sent none of them, and counting each such claim made a delivery `failed`
   * after fewer real attempts than the schedule gives (one fewer per crash). At most
   * `perWebhook` minus what this replica already has in flight per webhook, so a slow endpoint's
   * backlog never takes the slots of others. Oldest due first. Only the oldest 2 × `limit` (at
   * least 64) due rows are ranked (saturated webhooks left out), found as delivery-claim-sql.ts
   * says, so a claim costs the same with a backlog of millions as with none, whoever's backlog it
   * is: ranking every pending row made PostgreSQL the fan-out's bottleneck, and ranking 8 ×
   * `limit` took 8 ms a claim once claims grew with prefetching (4 ms now). A webhook one short of
   * its limit whose rows come first gets its one row and leaves the rest to the next claim, when
   * it is left out as saturated. A due delivery of a disabled webhook is not returned: the claim
   * ends it, failed "webhook disabled" with no attempt counted (delivery-claim-sql.ts), so no
   * replica ever holds a counted claim of a delivery that will not be sent.
   */
  claim(
    limit: number,
    busy: Map<string, number>,
    perWebhook: number,
    leaseMs: number,
  ): Promise<ClaimedDelivery[]> {
    const busyIds = [...busy.keys()]
    const busyCounts = busyIds.map((k) => busy.get(k) ?? 0)
    const saturated = busyIds.filter((k) => (busy.get(k) ?? 0) >= perWebhook)
    const ranked = Math.max(64, limit * 2)
    return this.rows<ClaimedDelivery>(CLAIM_SQL, [
      busyIds,
      busyCounts,
      saturated,
      perWebhook,
      limit,
      leaseMs,
      ranked,
      ranked * 4,
      DISABLED_REASON,
    ])
  }

  /**
   * When the earliest pending delivery that is not due yet falls due (null: none). Deliveries due
   * now but not claimable (their webhook's slots are taken, or another replica holds them) are left
   * out on purpose: a slot coming free or a lease running out brings them back, and counting them
   * would mean scanning a busy endpoint's whole backlog (it cost 12 ms per call, more PostgreSQL
   * time than the deliveries themselves) only to set a timer that finds nothing to claim.
   */
  async nextDueAt(): Promise<Date | null> {
    const rows = await this.rows<{ at: Date | null }>(
      `SELECT min(next_attempt_at) AS at FROM webhook_deliveries
       WHERE status = 'pending' AND next_attempt_at > now()`,
      [],
    )
    return rows[0]?.at ?? null
  }

  /**
   * Records an attempt. Only the claim that holds the lease may write it (one whose lease ran out
   * while it was sending may have been followed by a claim under the same number), and only while
   * the delivery is still pending (a webhook disabled meanwhile has already failed it), except a
   * success: an attempt in flight when its webhook was disabled reached the receiver, and "failed,
   * webhook disabled" would tell the owner it had not (and invite a second copy by manual retry).
   */
  finish(d: Claim, result: SendResult, step: NextStep): Promise<boolean> {
    return this.results.submit({ d, result, step })
  }

  private async finishMany(reqs: AttemptResult[]): Promise<boolean[]> {
    const updated = await this.rows<{ id: string }>(FINISH_SQL, [
      reqs.map((r) => r.d.id),
      reqs.map((r) => r.d.attempt),
      reqs.map((r) => r.step.status),
      reqs.map((r) => r.result.responseCode),
      reqs.map((r) => r.result.responseBody),
      reqs.map((r) => (r.step.status === 'pending' ? r.step.delayMs : null)),
      DISABLED_REASON,
      reqs.map((r) => r.d.lease),
    ])
    const done = new Set(updated.map((r) => r.id))
    const superseded = reqs.filter((r) => !done.has(r.d.id))
    // Not thrown: the results above are committed, and a group retried one by one would find
    // them recorded already; a lease left in place runs out by itself.
    if (superseded.length > 0) await this.releaseDisabled(superseded).catch(() => undefined)
    return reqs.map((r) => done.has(r.d.id))
  }

  /**
   * Attempts that came back (not 2xx) after their webhook's disabling failed the delivery: the
   * disabling keeps the claim's lease, so that a manual retry sends no second copy while the attempt
   * is out. Once it is back the lease goes: kept, it would make a retry leave the delivery alone
   * until it ran out (up to WEBHOOK_LEASE_MS). Rare: one more statement only then.
   */
  private async releaseDisabled(reqs: AttemptResult[]): Promise<void> {
    await this.rows(RELEASE_DISABLED_SQL, [
      reqs.map((r) => r.d.id),
      reqs.map((r) => r.d.attempt),
      reqs.map((r) => r.d.lease),
      DISABLED_REASON,
    ])
  }

  /**
   * A claimed delivery whose webhook turned out disabled before it was sent (read again before its
   * attempt, after a drop of the NATS connection: MissedChanges; the claim itself ends those of a
   * webhook already disabled): failed "webhook disabled", with the attempt its claim counted undone
   * and no lease, as a hand-back would (a delivery claimed and never sent counts nothing), also
   * when the disabling failed it first (it keeps the claim's lease).
   */
  async failUnsent(d: Claim): Promise<void> {
    await this.rows(FAIL_UNSENT_SQL, [d.id, d.attempt, d.lease, DISABLED_REASON])
  }

  /** A webhook as it is now (null fields: gone), as the claim reads it (MissedChanges). */
  async webhookNow(webhookId: string): Promise<Pick<ClaimedDelivery, 'url' | 'secret' | 'enabled'>> {
    const [w] = await this.rows<{ url: string; secret: string; enabled: boolean }>(
      'SELECT url, secret, enabled FROM webhooks WHERE id = $1',
      [webhookId],
    )
    return w ?? { url: null, secret: null, enabled: null }
  }

  /**
   * Gives claimed deliveries back unattempted: no lease, and the attempt the claim counted undone.
   * Only while the claim's own lease holds: once it ran out another claim may have taken the row
   * under the same number (undoing would clear that claim's lease while it sends, or, the webhook
   * disabled meanwhile, take back the number its 2xx is recorded under). A delivery its webhook's
   * disabling failed meanwhile (which keeps the lease) gets its number back too: it was not sent.
   */
  async unclaim(rows: Claim[]): Promise<void> {
    if (rows.length === 0) return
    await this.rows(UNCLAIM_SQL, [
      rows.map((r) => r.id),
      rows.map((r) => r.attempt),
      rows.map((r) => r.lease),
      DISABLED_REASON,
    ])
  }

  /**
   * Renews the leases of the claims a replica holds (waiting in memory or being attempted), in one
   * statement, each only while the row is still that claim's (same attempt number and lease token):
   * one whose lease ran out and was taken again stays lost. Answers each claim's new token, in
   * order (null: lost). A lease run out but not yet taken is renewed: nobody else has claimed it,
   * and now nobody can. A delivery its webhook's disabling failed keeps its lease (failPendingChunk) and
   * is renewed too, so the hand-back that follows still finds it.
   */
  async renew(rows: Claim[], leaseMs: number): Promise<Array<string | null>> {
    if (rows.length === 0) return []
    // By position, not id: a claim whose lease ran out and a later claim of the row are told apart.
    const renewed = await this.rows<{ n: number; lease: string }>(
      `UPDATE webhook_deliveries d SET locked_until = now() + $4::int * interval '1 millisecond'
       FROM unnest($1::text[], $2::int[], $3::timestamptz[]) WITH ORDINALITY AS v(id, attempt, lease, n)
       WHERE d.id = v.id AND d.attempt = v.attempt AND d.locked_until = v.lease
       RETURNING v.n::int AS n, d.locked_until::text AS lease`,
      [rows.map((r) => r.id), rows.map((r) => r.attempt), rows.map((r) => r.lease), leaseMs],
    )
    const tokens = new Map(renewed.map((r) => [r.n, r.lease]))
    return rows.map((_, i) => tokens.get(i + 1) ?? null)
  }

  /**
   * A delivery whose webhook is gone (deleted while its event was being fanned out, so the
   * deletion did not see it): deleted, with its event's payload if no other delivery of the
   * project needs it.
   */
  async remove(id: string, projectId: string): Promise<void> {
    await this.db.$transaction((tx) => deleteWithPayloads(tx, projectId, 'id = $1', 'x.id <> $1', [id]))
  }

  /**
   * Manual retry: due now, pending again. A delivery with an attempt in flight is left alone:
   * one pending under a lease that has not run out, and one its webhook's disabling failed while
   * an attempt was in flight, which keeps that attempt's lease (failPendingChunk) until the attempt
   * ends. Retried then, it was sent a second time at once, and the first attempt's 2xx, recorded
   * under a lease no longer there, was lost. Returns the delivery as it now stands. An ended
   * delivery's lease goes: one left behind by such an attempt that ended without a 2xx (no longer
   * renewed, it runs out within WEBHOOK_LEASE_MS). A delivery waiting for its next attempt has no
   * lease (NULL): `locked_until > now()` is then NULL, not false, so the in-flight test must say
   * "a lease that has not run out".
   */
  async retryNow(id: string, webhookId: string): Promise<DeliveryRow | null> {
    await this.db.$executeRawUnsafe(
      `UPDATE webhook_deliveries
       SET status = 'pending', next_attempt_at = now(), completed_at = NULL,
           locked_until = CASE WHEN status = 'pending' THEN locked_until END
       WHERE id = $1 AND webhook_id = $2
         AND NOT (locked_until IS NOT NULL AND locked_until > now())`,
      id,
      webhookId,
    )
    const rows = await this.db.$queryRawUnsafe<DeliveryRow[]>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = $1 AND webhook_id = $2`,
      id,
      webhookId,
    )
    return rows[0] ?? null
  }

  /**
   * Deletes the finished deliveries (`success`, `failed`) of one webhook created more than `days`
   * ago, oldest first, at most `chunk` of them, through the (webhook_id, created_at, id) index;
   * with them the payloads of their events no other delivery of the project needs. Returns how
   * many deliveries went. Rows another transaction holds (a retry being requested) are skipped,
   * and the status is checked again on the locked row, so a delivery made pending again stays.
   */
  pruneFinished(webhookId: string, projectId: string, days: number, chunk: number): Promise<number> {
    return this.db.$transaction((tx) =>
      deleteWithPayloads(
        tx,
        projectId,
        `id IN (
           SELECT id FROM webhook_deliveries
           WHERE webhook_id = $1 AND created_at < now() - ($3::int * interval '1 day') AND status <> 'pending'
           ORDER BY created_at, id LIMIT $4 FOR UPDATE SKIP LOCKED)`,
        'x.id NOT IN (SELECT id FROM d)',
        [webhookId, days, chunk],
      ),
    )
  }

  /** Every webhook, for the pruner. */
  webhooks(): Promise<Array<{ id: string; projectId: string }>> {
    return this.db.webhook.findMany({ select: { id: true, projectId: true }, orderBy: { id: 'asc' } })
  }

  async pendingCount(): Promise<number> {
    const rows = await this.db.$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'`,
    )
    return rows[0]?.n ?? 0
  }
}
