import { type Db, type PgClient, statement } from '@mailer/db'
import { type Admission, admit, type CounterState, type CounterWindows } from '../domain/limits.js'

type Tx = PgClient

/** A project's limits for one request: its counter windows, the rate limit and `dailyLimit`. */
export interface Limits {
  windows: CounterWindows
  rateLimit: number
  dailyLimit: number
}

/**
 * Adds `n` to the current rate window and the UTC day in one statement (touching the previous
 * window too, to read it under the same lock), then gives back what was not admitted.
 * Rows are locked in "window" order (`day:…` before `rate:…`), the order the one-statement path
 * (INSERT_AND_COUNT_SQL) takes them in: locking previous, current, day here let a request counted
 * step by step and one counted in one statement each hold a row the other waited for, and
 * PostgreSQL broke the deadlock by failing one of them (a 500 to a sender at its limit).
 */
const COUNT_SENDS = statement(
  'accept-count',
  `INSERT INTO send_counters (project_id, "window", count, expires_at)
   SELECT $1, v.w, v.n, v.expires_at
   FROM (VALUES ($2::text, 0, $3::timestamptz), ($4::text, $8::int, $5::timestamptz), ($6::text, $8::int, $7::timestamptz))
     AS v(w, n, expires_at)
   ORDER BY v.w
   ON CONFLICT (project_id, "window") DO UPDATE SET count = send_counters.count + EXCLUDED.count
   RETURNING "window", count`,
)

export async function countSends(tx: Tx, projectId: string, limits: Limits, n: number): Promise<Admission> {
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
