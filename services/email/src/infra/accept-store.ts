import type { Outbox } from '@mailer/bus'
import { type Db, inTransaction, type PgClient, type PgPool, statement } from '@mailer/db'
import { type Admission, admit, type CounterState, type CounterWindows } from '../domain/limits.js'
import { acceptRows, type NewEmail, type RowContext } from './accept-rows.js'
import { DELETE_REFUSED_SQL, INSERT_ACCEPTED_SQL } from './accept-sql.js'

const INSERT_ACCEPTED = statement('accept-insert', INSERT_ACCEPTED_SQL)

export type { NewEmail } from './accept-rows.js'

type Tx = PgClient
type OutboxRows = Awaited<ReturnType<Outbox['write']>>
type LimitCode = ReturnType<Admission['errorFor']>

export interface Limits {
  windows: CounterWindows
  rateLimit: number
  dailyLimit: number
}

export interface StoreRequest extends RowContext {
  /** Null for sends that are never counted (test keys). */
  limits: Limits | null
  emails: NewEmail[]
}

export interface StoreResult {
  /** Ids stored and admitted by the limits. */
  accepted: Set<string>
  /** Ids the limits did not admit (their rows were removed again), with the limit's code. */
  refused: Map<string, LimitCode>
  // An id in neither lost its idempotency key to a concurrent request.
  outboxRows: OutboxRows
}

const ALL_ADMITTED = (n: number): Admission => ({ admitted: n, errorFor: () => 'rate_limited' })
const none = (): StoreResult => ({ accepted: new Set(), refused: new Map(), outboxRows: [] })

// Raw JSON columns come back parsed or as text depending on the driver path.
const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T

/** One request alone (see storeMany). */
export async function storeAccepted(pool: PgPool, req: StoreRequest): Promise<StoreResult> {
  const [res] = await storeMany(pool, [req])
  return res!
}

/**
 * One transaction for one or more requests (the accept path's GroupCommit combines concurrent
 * ones), in two steps:
 * everything the emails need, in one multi-table insert (accept-sql.ts), then the limits, counted
 * last with one upsert per project and window, so a project's counter rows stay locked only for
 * that statement and the commit. Emails the limits do not admit (rare: callers pre-check the
 * counters) are deleted again in the same transaction. Results come back in request order.
 */
export async function storeMany(pool: PgPool, reqs: StoreRequest[]): Promise<StoreResult[]> {
  const built = reqs.map((r) => acceptRows(r, r.emails))
  if (built.every((b) => b.emails.length === 0)) return reqs.map(none)
  const all = <K extends keyof (typeof built)[number]>(k: K) => built.flatMap((b) => b[k] as unknown[])
  return inTransaction(pool, async (tx) => {
    const {
      rows: [res],
    } = await tx.query<{ inserted: unknown; outbox: unknown }>(
      INSERT_ACCEPTED([
        JSON.stringify(all('emails')),
        JSON.stringify(all('recipients')),
        JSON.stringify(all('contents')),
        JSON.stringify(all('events')),
        JSON.stringify(all('outbox')),
      ]),
    )
    const inserted = new Set(json<string[]>(res?.inserted ?? []))
    const emailOfMsg = new Map(built.flatMap((b) => b.outbox.map((o) => [o.msg_id, o.email_id] as const)))
    const outboxByEmail = new Map<string, OutboxRows>()
    for (const r of json<Array<{ id: string; subject: string; msgId: string; payload: unknown }>>(
      res?.outbox ?? [],
    )) {
      const emailId = emailOfMsg.get(r.msgId) ?? ''
      outboxByEmail.set(emailId, [...(outboxByEmail.get(emailId) ?? []), { ...r, id: BigInt(r.id) }])
    }
    const kept = reqs.map((r) => r.emails.filter((e) => inserted.has(e.id)))
    const results: StoreResult[] = reqs.map(none)

    // Requests sharing a project and limits are counted together, in arrival order; groups are
    // counted in one global order (project, window) so concurrent transactions never deadlock.
    const groups = new Map<string, number[]>()
    reqs.forEach((r, i) => {
      if (kept[i]!.length === 0) return
      const g = r.limits
        ? `${r.projectId}|${r.limits.windows.current.key}|${r.limits.windows.day.key}|${r.limits.rateLimit}|${r.limits.dailyLimit}`
        : `~unlimited|${i}`
      groups.set(g, [...(groups.get(g) ?? []), i])
    })
    const refusedAll: string[] = []
    for (const g of [...groups.keys()].sort()) {
      const members = groups.get(g)!
      const emails = members.flatMap((i) => kept[i]!.map((e) => ({ i, id: e.id })))
      const first = reqs[members[0]!]!
      const admission = first.limits
        ? await countSends(tx, first.projectId, first.limits, emails.length)
        : ALL_ADMITTED(emails.length)
      emails.forEach((e, j) => {
        const r = results[e.i]!
        if (j < admission.admitted) {
          r.accepted.add(e.id)
          r.outboxRows.push(...(outboxByEmail.get(e.id) ?? []))
        } else {
          r.refused.set(e.id, admission.errorFor(j))
          refusedAll.push(e.id)
        }
      })
    }
    if (refusedAll.length > 0) {
      const drop = refusedAll.flatMap((id) => (outboxByEmail.get(id) ?? []).map((r) => r.id))
      await tx.query(DELETE_REFUSED_SQL, [refusedAll, drop])
    }
    return results
  })
}

/**
 * Adds `n` to the current rate window and the UTC day in one statement (touching the previous
 * window too, to read it under the same lock order), then gives back what was not admitted.
 * Rows are locked in one order (previous, current, day), so concurrent requests never deadlock.
 */
const COUNT_SENDS = statement(
  'accept-count',
  `INSERT INTO send_counters (project_id, "window", count, expires_at)
   VALUES ($1, $2, 0, $3::timestamptz), ($1, $4, $8::int, $5::timestamptz), ($1, $6, $8::int, $7::timestamptz)
   ON CONFLICT (project_id, "window") DO UPDATE SET count = send_counters.count + EXCLUDED.count
   RETURNING "window", count`,
)

async function countSends(tx: Tx, projectId: string, limits: Limits, n: number): Promise<Admission> {
  const w = limits.windows
  const { rows } = await tx.query<{ window: string; count: number }>(
    COUNT_SENDS([
      projectId,
      w.previous.key,
      w.previous.expiresAt,
      w.current.key,
      w.current.expiresAt,
      w.day.key,
      w.day.expiresAt,
      n,
    ]),
  )
  const after = new Map(rows.map((r) => [r.window, Number(r.count)]))
  const state: CounterState = {
    previous: after.get(w.previous.key) ?? 0,
    current: (after.get(w.current.key) ?? n) - n,
    day: (after.get(w.day.key) ?? n) - n,
  }
  const admission = admit(n, state, w.elapsed, limits.rateLimit, limits.dailyLimit)
  if (admission.admitted < n) await uncount(tx, projectId, w, n - admission.admitted)
  return admission
}

async function uncount(tx: Tx, projectId: string, w: CounterWindows, n: number): Promise<void> {
  await tx.query(
    `UPDATE send_counters SET count = count - $4::int WHERE project_id = $1 AND "window" IN ($2, $3)`,
    [projectId, w.current.key, w.day.key, n],
  )
}

/** The counters as they stand, without counting (batch dry runs). */
export async function readCounters(db: Db, projectId: string, w: CounterWindows): Promise<CounterState> {
  const rows = await db.sendCounter.findMany({
    where: { projectId, window: { in: [w.previous.key, w.current.key, w.day.key] } },
    select: { window: true, count: true },
  })
  const get = (k: string) => rows.find((r) => r.window === k)?.count ?? 0
  return { previous: get(w.previous.key), current: get(w.current.key), day: get(w.day.key) }
}
