import { newId } from '@mailer/contracts'
import { createPgPool, inTransaction, type PgPool } from '@mailer/db'
import { useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { counterWindows } from '../../services/email/src/domain/limits.js'
import { type StoreRequest, storeMany } from '../../services/email/src/infra/accept-store.js'
import { countSends, type Limits } from '../../services/email/src/infra/send-counters.js'
import { preparedSend } from '../support/prepared-send.js'

/*
 * The two ways the accept path counts a project's sends (accept-store.ts: the one-statement
 * insert-and-count, and the step-by-step count after a limit was reached) against the real
 * PostgreSQL, at the moment a third transaction holding the project's counter rows commits.
 */
const te = useTestEnv()
let pool: PgPool
const projectId = newId('project')

beforeAll(async () => {
  pool = createPgPool(te.databaseUrl, { max: 6 })
  await pool.query(`INSERT INTO projects (id, slug, name, updated_at) VALUES ($1, 'locks', 'locks', now())`, [
    projectId,
  ])
})
afterAll(async () => {
  await pool?.end()
})

const limits = (): Limits => ({
  windows: counterWindows(new Date(), 60),
  rateLimit: 1_000,
  dailyLimit: 1_000,
})

function request(l: Limits): StoreRequest {
  const send = preparedSend({
    input: { from: 'a@locks.test', to: 'b@example.com', subject: 'Hi', text: 'x' } as never,
  })
  return {
    projectId,
    apiKeyId: null,
    mode: 'live',
    source: 'http',
    now: new Date(),
    retentionDays: 30,
    limits: l,
    emails: [{ id: newId('email'), send, key: null, status: 'queued' }],
  }
}

/** Until `n` sessions of this schema wait for a row lock. */
async function waitersReach(n: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { rows } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`,
    )
    if ((rows[0]?.n ?? 0) >= n) return
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`fewer than ${n} sessions ever waited for a lock`)
}

/** One round: the rows held by another transaction, both kinds of count waiting, then the commit. */
async function round(): Promise<Array<PromiseSettledResult<unknown>>> {
  const l = limits()
  const w = l.windows
  await pool.query('DELETE FROM send_counters')
  await pool.query(
    `INSERT INTO send_counters (project_id, "window", count, expires_at)
     VALUES ($1, $2, 0, $3), ($1, $4, 0, $5), ($1, $6, 0, $7)`,
    [
      projectId,
      w.previous.key,
      w.previous.expiresAt,
      w.current.key,
      w.current.expiresAt,
      w.day.key,
      w.day.expiresAt,
    ],
  )
  const holder = await pool.connect()
  try {
    await holder.query('BEGIN')
    await holder.query('SELECT 1 FROM send_counters WHERE project_id = $1 FOR UPDATE', [projectId])
    // A request counted step by step (after a limit was reached) waits for the rows...
    const stepByStep = inTransaction(pool, (tx) => countSends(tx, projectId, l, 1))
    await waitersReach(1)
    // ...and so does a request counted in one statement.
    const oneStatement = storeMany(pool, [request(l)])
    await waitersReach(2)
    await holder.query('COMMIT')
    return await Promise.allSettled([stepByStep, oneStatement])
  } finally {
    holder.release()
  }
}

describe('counter rows lock order', () => {
  it('a step-by-step count and a one-statement count of one project, waiting for the same rows, both succeed', async () => {
    // Which of the two gets on first after the commit varies; a few rounds cover both orders.
    for (let i = 0; i < 20; i++) {
      const outcomes = await round()
      // Before the fix one of them failed now and then with "deadlock detected" (a 500).
      expect(outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : 'ok'))).toEqual(['ok', 'ok'])
      const { rows } = await pool.query<{ count: number }>(
        `SELECT count FROM send_counters WHERE project_id = $1 AND "window" LIKE 'day:%'`,
        [projectId],
      )
      expect(rows[0]?.count).toBe(2)
    }
  })
})
