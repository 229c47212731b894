import type { Db, PgPool } from '@mailer/db'
import type { CounterState, CounterWindows } from '../domain/limits.js'
import { SEND_LOOKUPS_SQL } from './accept-sql.js'

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

const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T

/** Suppressions, idempotency keys and limit counters for one request, in one round trip. */
export async function lookupForSend(
  pool: PgPool,
  q: { projectId: string; addresses: string[]; keys: string[]; windows: CounterWindows | null },
): Promise<SendLookups> {
  const w = q.windows
  const windowKeys = w ? [w.previous.key, w.current.key, w.day.key] : []
  if (q.addresses.length === 0 && q.keys.length === 0 && !w)
    return { suppressed: new Set(), keyed: new Map(), counters: null }
  const {
    rows: [row],
  } = await pool.query<{ suppressed: unknown; keyed: unknown; counters: unknown }>(SEND_LOOKUPS_SQL, [
    q.addresses,
    q.projectId,
    q.keys,
    windowKeys,
  ])
  const keyed = json<Array<Omit<KeyedEmail, 'scheduledAt'> & { scheduledAt: string | null }>>(
    row?.keyed ?? [],
  )
  const counts = json<Record<string, number>>(row?.counters ?? {})
  return {
    suppressed: new Set(json<string[]>(row?.suppressed ?? [])),
    keyed: new Map(
      keyed.map((k) => [
        k.idempotencyKey!,
        { ...k, scheduledAt: k.scheduledAt ? new Date(k.scheduledAt) : null },
      ]),
    ),
    counters: w
      ? {
          previous: counts[w.previous.key] ?? 0,
          current: counts[w.current.key] ?? 0,
          day: counts[w.day.key] ?? 0,
        }
      : null,
  }
}

/** Emails of the project holding any of `keys`, by key (one query). */
export async function findByKeys(
  db: Db,
  projectId: string,
  keys: string[],
): Promise<Map<string, KeyedEmail>> {
  if (keys.length === 0) return new Map()
  const rows = await db.email.findMany({
    where: { projectId, idempotencyKey: { in: keys } },
    select: { id: true, mode: true, scheduledAt: true, requestHash: true, idempotencyKey: true },
  })
  return new Map(rows.map((r) => [r.idempotencyKey!, r]))
}
