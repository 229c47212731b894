import { newId } from '@mailer/contracts'
import { createPgPool, inTransaction, type PgPool } from '@mailer/db'
import { useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { counterWindows } from '../../services/email/src/domain/limits.js'
import { type StoreRequest, storeMany } from '../../services/email/src/infra/accept-store.js'
import { countSends, type Limits } from '../../services/email/src/infra/send-counters.js'
import { waitersOn } from '../support/db.js'
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
    requestId: 'req_test',
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

/**
 * Until `n` sessions wait for the locks of `holder` (a backend pid). Counted across the database,
 * another test file's waiter let a round go on before both counts here waited.
 */
async function waitersReach(holder: number, n: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await waitersOn(pool, holder)) >= n) return
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`fewer than ${n} sessions ever waited for the holder's lock`)
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
    const pid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid
    // A request counted step by step (after a limit was reached) waits for the rows...
    const stepByStep = inTransaction(pool, (tx) => countSends(tx, projectId, l, 1))
    await waitersReach(pid, 1)
    // ...and so does a request counted in one statement.
    const oneStatement = storeMany(pool, [request(l)])
    await waitersReach(pid, 2)
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
