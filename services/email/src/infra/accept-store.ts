import { type OutboxRow, outboxRowsOf } from '@mailer/bus'
import { DISPATCH_GROUP_MAX, SUBJECTS } from '@mailer/contracts'
import { inTransaction, jsonColumn, type PgPool, statement } from '@mailer/db'
import type { Admission } from '../domain/limits.js'
import { acceptRows, type NewEmail, type RowContext } from './accept-rows.js'
import { DELETE_REFUSED_SQL, INSERT_ACCEPTED_SQL, INSERT_AND_COUNT_SQL } from './accept-sql.js'
import { countSends, type Limits } from './send-counters.js'

const INSERT_ACCEPTED = statement('accept-insert', INSERT_ACCEPTED_SQL)
const INSERT_AND_COUNT = statement('accept-insert-count', INSERT_AND_COUNT_SQL)

export type { NewEmail } from './accept-rows.js'
export type { Limits } from './send-counters.js'

type LimitCode = ReturnType<Admission['errorFor']>

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
  /** Ids not stored because recipients of theirs are on the suppression list, with those addresses. */
  suppressed: Map<string, Set<string>>
  // An id in none of these lost its idempotency key to an earlier or concurrent request.

  /**
   * To publish after the commit: the rows of this request's emails, and with the first request
   * the rows of the whole write (its dispatch and event group messages).
   */
  outboxRows: OutboxRow[]
}

const none = (): StoreResult => ({
  accepted: new Set(),
  refused: new Map(),
  suppressed: new Map(),
  outboxRows: [],
})

// The SQLSTATE of mailer_send_limit_reached() (migration 20261127000000_send_limit_reached).
const LIMIT_REACHED = 'ML429'

type Built = ReturnType<typeof acceptRows>

/**
 * Stores one or more requests (the accept path's GroupCommit combines concurrent ones); results
 * come back in request order. Usually in one statement, rows and counters together
 * (INSERT_AND_COUNT_SQL: one round trip instead of four); when that finds a limit would be passed
 * it leaves nothing behind and the requests are stored step by step, admitting emails one by one.
 */
export async function storeMany(pool: PgPool, reqs: StoreRequest[]): Promise<StoreResult[]> {
  const built = reqs.map((r) => acceptRows(r, r.emails))
  if (built.every((b) => b.emails.length === 0)) return reqs.map(none)
  try {
    return await storeInOne(pool, reqs, built)
  } catch (err) {
    if ((err as { code?: unknown }).code !== LIMIT_REACHED) throw err
  }
  return storeStepByStep(pool, reqs, built)
}

/**
 * Requests sharing a project and limits are counted together, in arrival order; groups are
 * counted in one global order (project, window) so concurrent transactions never deadlock.
 * Requests without limits (test keys) are left out.
 */
function limitGroups(reqs: StoreRequest[], include: (i: number) => boolean): Map<string, number[]> {
  const groups = new Map<string, number[]>()
  reqs.forEach((r, i) => {
    if (!r.limits || !include(i)) return
    const g = `${r.projectId}|${r.limits.windows.current.key}|${r.limits.windows.day.key}|${r.limits.rateLimit}|${r.limits.dailyLimit}`
    groups.set(g, [...(groups.get(g) ?? []), i])
  })
  return new Map([...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

interface Written {
  inserted: unknown
  suppressed: unknown
  outbox: unknown
}

/**
 * The inserted ids, the suppressed addresses by email, the outbox rows by email, and the rows of
 * no single email (the group messages: dispatch, and events when the write is one statement):
 * those go to the first request, so they are published once. `emailOfMsg` names the email of
 * each event message sent as a row of its own (the step-by-step write's); without it every row
 * is a group message.
 */
function readInserted(res: Written | undefined, emailOfMsg = new Map<string, string>()) {
  const inserted = new Set(jsonColumn<string[]>(res?.inserted ?? []))
  const suppressed = new Map<string, Set<string>>()
  for (const [emailId, address] of jsonColumn<Array<[string, string]>>(res?.suppressed ?? [])) {
    suppressed.set(emailId, (suppressed.get(emailId) ?? new Set()).add(address))
  }
  const outboxByEmail = new Map<string, OutboxRow[]>()
  const shared: OutboxRow[] = []
  for (const r of outboxRowsOf(res?.outbox)) {
    const emailId = emailOfMsg.get(r.msgId)
    if (emailId === undefined) shared.push(r)
    else outboxByEmail.set(emailId, [...(outboxByEmail.get(emailId) ?? []), r])
  }
  return { inserted, suppressed, outboxByEmail, shared }
}

/** Each request's emails left out for suppressed recipients. */
function suppressedOf(r: StoreRequest, suppressed: Map<string, Set<string>>, result: StoreResult): void {
  for (const e of r.emails) {
    const addresses = suppressed.get(e.id)
    if (addresses) result.suppressed.set(e.id, addresses)
  }
}

/** The JSON parameters both statements start with ($1-$6: accept-sql.ts). */
const rowParams = (built: Built[], grpOf: (i: number) => number | null) => {
  const all = <K extends keyof Built>(k: K) => built.flatMap((b) => b[k] as unknown[])
  return [
    // Set on the rows, not copied into new ones (`{ ...e, grp }`): V8's slow path for an object
    // spread followed by more properties cost microseconds per email.
    JSON.stringify(
      built.flatMap((b, i) => {
        const grp = grpOf(i) ?? undefined
        for (const e of b.emails) e.grp = grp
        return b.emails
      }),
    ),
    JSON.stringify(all('recipients')),
    JSON.stringify(all('contents')),
    JSON.stringify(all('events')),
    SUBJECTS.emailDispatch,
    DISPATCH_GROUP_MAX,
  ]
}

async function storeInOne(pool: PgPool, reqs: StoreRequest[], built: Built[]): Promise<StoreResult[]> {
  const groups = [...limitGroups(reqs, () => true).values()]
  const grpOf = new Map(groups.flatMap((members, g) => members.map((i) => [i, g] as const)))
  const {
    rows: [res],
  } = await pool.query<Written>(
    INSERT_AND_COUNT([
      ...rowParams(built, (i) => grpOf.get(i) ?? null),
      JSON.stringify(
        groups.map((members, g) => {
          const r = reqs[members[0]!]!
          const w = r.limits!.windows
          return {
            grp: g,
            project_id: r.projectId,
            prev_key: w.previous.key,
            prev_expires: w.previous.expiresAt,
            cur_key: w.current.key,
            cur_expires: w.current.expiresAt,
            day_key: w.day.key,
            day_expires: w.day.expiresAt,
            elapsed: w.elapsed,
            rate_limit: r.limits!.rateLimit,
            daily_limit: r.limits!.dailyLimit,
          }
        }),
      ),
    ]),
  )
  // Every outbox row of this write is a group message (dispatch and events): shared.
  const { inserted, suppressed, shared } = readInserted(res)
  return reqs.map((r, i) => {
    const result = none()
    if (i === 0) result.outboxRows.push(...shared)
    suppressedOf(r, suppressed, result)
    for (const e of r.emails) if (inserted.has(e.id)) result.accepted.add(e.id)
    return result
  })
}

/**
 * A concurrent duplicate (same project and idempotency key) that lost its key to an email of this
 * same write which the limits then refused gets that email's refusal: the key is free again and
 * nothing of either was stored, so there is no first email to answer with.
 */
function refuseDuplicatesOfRefused(
  reqs: StoreRequest[],
  inserted: Set<string>,
  results: StoreResult[],
): void {
  const refusedKeys = new Map<string, LimitCode>()
  const keyOf = (r: StoreRequest, key: string) => `${r.projectId}\u0000${key}`
  reqs.forEach((r, i) => {
    for (const e of r.emails) {
      const code = results[i]!.refused.get(e.id)
      if (code && e.key) refusedKeys.set(keyOf(r, e.key), code)
    }
  })
  if (refusedKeys.size === 0) return
  reqs.forEach((r, i) => {
    for (const e of r.emails) {
      if (!e.key || inserted.has(e.id) || results[i]!.suppressed.has(e.id)) continue
      const code = refusedKeys.get(keyOf(r, e.key))
      if (code) results[i]!.refused.set(e.id, code)
    }
  })
}

/**
 * One transaction in steps: everything the emails need, in one multi-table insert, then the
 * limits, counted last with one upsert per project and window, so a project's counter rows stay
 * locked only for that statement and the commit. Emails the limits do not admit are deleted again
 * in the same transaction.
 */
async function storeStepByStep(pool: PgPool, reqs: StoreRequest[], built: Built[]): Promise<StoreResult[]> {
  return inTransaction(pool, async (tx) => {
    // Each event's message as a row of its own (the one-statement write derives them from $4).
    const messages = built.flatMap((b) => b.eventOutbox())
    const {
      rows: [res],
    } = await tx.query<Written>(INSERT_ACCEPTED([...rowParams(built, () => null), JSON.stringify(messages)]))
    const { inserted, suppressed, outboxByEmail, shared } = readInserted(
      res,
      new Map(messages.map((m) => [m.msg_id, m.email_id])),
    )
    const kept = reqs.map((r) => r.emails.filter((e) => inserted.has(e.id)))
    const results: StoreResult[] = reqs.map(none)
    reqs.forEach((r, i) => {
      suppressedOf(r, suppressed, results[i]!)
    })
    // A refused email stays named in its group's dispatch message: the dispatcher finds no such
    // email and skips it.
    results[0]?.outboxRows.push(...shared)
    const counted = new Set<number>()
    const refusedAll: string[] = []
    for (const members of limitGroups(reqs, (i) => kept[i]!.length > 0).values()) {
      for (const i of members) counted.add(i)
      const emails = members.flatMap((i) => kept[i]!.map((e) => ({ i, id: e.id })))
      const first = reqs[members[0]!]!
      const admission = await countSends(tx, first.projectId, first.limits!, emails.length)
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
    // Sends that are never counted (test keys) are all admitted.
    kept.forEach((emails, i) => {
      if (counted.has(i)) return
      for (const e of emails) {
        results[i]!.accepted.add(e.id)
        results[i]!.outboxRows.push(...(outboxByEmail.get(e.id) ?? []))
      }
    })
    refuseDuplicatesOfRefused(reqs, inserted, results)
    if (refusedAll.length > 0) {
      const drop = refusedAll.flatMap((id) => (outboxByEmail.get(id) ?? []).map((r) => r.id))
      await tx.query(DELETE_REFUSED_SQL, [refusedAll, drop])
    }
    return results
  })
}
