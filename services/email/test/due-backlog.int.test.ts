import { createPgPool, type PgPool } from '@mailer/db'
import { statementWork, useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DUE_RETRIES_SQL, DUE_SCHEDULED_SQL } from '../src/infra/due-sweeper.js'

// After a relay outage every deferred email falls due at once; at a broadcast's hour every
// scheduled one does. The due sweeper releases them 500 at a time, oldest first, and each batch
// must cost the same whatever the backlog (due-sweeper.ts), with the statistics a big table has
// then: taken before the backlog (autovacuum off here; a big table is analyzed again only once a
// tenth of it has changed). Work is counted in buffer pages per batch (EXPLAIN ANALYZE BUFFERS,
// rolled back), not in time.
const te = useTestEnv()
let pool: PgPool

/** Pages one batch touches: the sweeper's statement, rolled back. */
const batchPages = async (sql: string, params: unknown[]) => (await statementWork(pool, sql, params)).pages

/** `n` emails in `status`, due over the last hour (`column` the due time), numbered from `from`. */
async function backlog(status: string, column: string, from: number, n: number): Promise<void> {
  await pool.query(
    `INSERT INTO emails (id, project_id, mode, source, status, from_address, subject, ${column})
     SELECT 'email_' || $1 || '_' || lpad(g::text, 8, '0'), 'proj_1', 'live', 'api', $1, 'a@example.com', 's',
            now() - interval '1 hour' + (g % 3600) * interval '1 second'
     FROM generate_series($2::int, $3::int) g`,
    [status, from, from + n - 1],
  )
}

beforeAll(async () => {
  pool = createPgPool(te.databaseUrl, { max: 4 })
  await pool.query('ALTER TABLE emails SET (autovacuum_enabled = false)')
  await pool.query(
    `INSERT INTO emails (id, project_id, mode, source, status, from_address, subject, delivered_at)
     SELECT 'email_old_' || lpad(g::text, 8, '0'), 'proj_1', 'live', 'api', 'delivered', 'a@example.com', 's', now()
     FROM generate_series(1, 20000) g`,
  )
  await pool.query('ANALYZE emails')
}, 60_000)

afterAll(async () => {
  await pool?.end()
})

describe('due sweeper under a backlog', () => {
  it('releases deferred emails oldest first, each batch the same work with 50,000 due as with 5,000', async () => {
    await backlog('deferred', 'next_attempt_at', 1, 5_000)
    const small = await batchPages(DUE_RETRIES_SQL, ['deferred'])
    await backlog('deferred', 'next_attempt_at', 5_001, 45_000)
    const large = await batchPages(DUE_RETRIES_SQL, ['deferred'])
    expect(large, `pages: ${small} with 5,000 due, ${large} with 50,000`).toBeLessThan(small * 1.5 + 50)

    const { rows } = await pool.query(DUE_RETRIES_SQL, ['deferred'])
    expect(rows).toHaveLength(500)
    // Oldest first: the batch holds every email due before the newest one it took.
    const taken = new Set(rows.map((r: { id: string }) => r.id))
    const { rows: older } = await pool.query(
      `SELECT count(*)::int AS n FROM emails WHERE status = 'deferred' AND next_attempt_at IS NOT NULL
         AND next_attempt_at < (SELECT max(next_attempt_at) FROM emails WHERE id = ANY($1))`,
      [[...taken]],
    )
    expect(older[0].n).toBe(0)
  })

  it('releases scheduled emails with the same work whatever the backlog', async () => {
    await backlog('scheduled', 'scheduled_at', 1, 5_000)
    const small = await batchPages(DUE_SCHEDULED_SQL, [])
    await backlog('scheduled', 'scheduled_at', 5_001, 45_000)
    const large = await batchPages(DUE_SCHEDULED_SQL, [])
    expect(large, `pages: ${small} with 5,000 due, ${large} with 50,000`).toBeLessThan(small * 1.5 + 50)
  })
})
