import { type Db, jsonColumn, type PgPool, statement } from '@mailer/db'
import type { CounterState, CounterWindows } from '../domain/limits.js'
import { SEND_LOOKUPS_SQL } from './accept-sql.js'

const SEND_LOOKUPS = statement('accept-lookups', SEND_LOOKUPS_SQL)

/** An email already holding an idempotency key. */
export interface KeyedEmail {
  id: string
  mode: string
  scheduledAt: Date | null
  requestHash: string | null
  idempotencyKey: string | null
}

export interface SendLookups {
  /** The given addresses (lower-case) that are on the suppression list. */
  suppressed: Set<string>
  /** Emails of the project holding one of the given keys, by key. */
  keyed: Map<string, KeyedEmail>
  /** The project's counters, when windows were given. */
  counters: CounterState | null
}

export interface LookupQuery {
  projectId: string
  addresses: string[]
  keys: string[]
  /** The keys' namespace: a broadcast's emails' keys (true) or the API's (false). */
  broadcast: boolean
  windows: CounterWindows | null
}

const nothing = (): SendLookups => ({ suppressed: new Set(), keyed: new Map(), counters: null })
const pair = (a: string, b: string) => `${a}\u0000${b}`
const keyOf = (projectId: string, broadcast: boolean, key: string) =>
  pair(projectId, `${broadcast ? 'b' : 'a'}${key}`)

/**
 * Suppressions, idempotency keys and limit counters for many requests (of any projects) in one
 * round trip; answers one result per query, in order. The accept path batches the requests that
 * wait while a lookup is in flight (GroupCommit), so a busy email service reads once per batch.
 */
export async function lookupMany(pool: PgPool, queries: LookupQuery[]): Promise<SendLookups[]> {
  const windowKeys = (w: CounterWindows) => [w.previous.key, w.current.key, w.day.key]
  const asked = queries.filter((q) => q.addresses.length > 0 || q.keys.length > 0 || q.windows)
  if (asked.length === 0) return queries.map(nothing)
  const keyPairs = asked.flatMap((q) => q.keys.map((k) => [q.projectId, k, q.broadcast] as const))
  const windowPairs = asked.flatMap((q) =>
    q.windows ? windowKeys(q.windows).map((w) => [q.projectId, w] as const) : [],
  )
  const {
    rows: [row],
  } = await pool.query<{ suppressed: unknown; keyed: unknown; counters: unknown }>(
    SEND_LOOKUPS([
      [...new Set(asked.flatMap((q) => q.addresses))],
      keyPairs.map((p) => p[0]),
      keyPairs.map((p) => p[1]),
      keyPairs.map((p) => p[2]),
      windowPairs.map((p) => p[0]),
      windowPairs.map((p) => p[1]),
    ]),
  )
  const suppressed = new Set(jsonColumn<string[]>(row?.suppressed ?? []))
  const keyed = new Map<string, KeyedEmail>()
  for (const k of jsonColumn<
    Array<
      Omit<KeyedEmail, 'scheduledAt'> & { projectId: string; broadcast: boolean; scheduledAt: string | null }
    >
  >(row?.keyed ?? [])) {
    const { projectId, broadcast, ...email } = k
    keyed.set(keyOf(projectId, broadcast, k.idempotencyKey!), {
      ...email,
      scheduledAt: k.scheduledAt ? new Date(k.scheduledAt) : null,
    })
  }
  const counts = new Map(
    jsonColumn<Array<{ projectId: string; window: string; count: number }>>(row?.counters ?? []).map((c) => [
      pair(c.projectId, c.window),
      Number(c.count),
    ]),
  )
  return queries.map((q) => {
    const w = q.windows
    const count = (key: string) => counts.get(pair(q.projectId, key)) ?? 0
    return {
      suppressed: new Set(q.addresses.filter((a) => suppressed.has(a))),
      keyed: new Map(
        q.keys.flatMap((k) => {
          const e = keyed.get(keyOf(q.projectId, q.broadcast, k))
          return e ? [[k, e] as const] : []
        }),
      ),
      counters: w
        ? { previous: count(w.previous.key), current: count(w.current.key), day: count(w.day.key) }
        : null,
    }
  })
}

/** Emails of the project holding any of `keys` in their namespace (see LookupQuery), by key (one query). */
export async function findByKeys(
  db: Db,
  projectId: string,
  keys: string[],
  broadcast: boolean,
): Promise<Map<string, KeyedEmail>> {
  if (keys.length === 0) return new Map()
  const rows = await db.email.findMany({
    where: { projectId, idempotencyKey: { in: keys }, broadcastId: broadcast ? { not: null } : null },
    select: { id: true, mode: true, scheduledAt: true, requestHash: true, idempotencyKey: true },
  })
  return new Map(rows.map((r) => [r.idempotencyKey!, r]))
}
