import pg from 'pg'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { createPgPool, inTransaction } from '../src/pg-pool.js'

/**
 * The hot paths' plain pg pool when the database goes away under it (a restart, a failover): the
 * work in hand fails with an error its caller can retry, the process lives on, and the next
 * transaction gets a fresh connection.
 */
const pool = createPgPool(inject('databaseUrl'), { max: 2 })
const admin = new pg.Pool({ connectionString: inject('databaseUrl'), max: 1 })
afterAll(async () => {
  await pool.end()
  await admin.end()
})

describe('inTransaction', () => {
  it('fails the transaction, not the process, when the server ends its connection mid-transaction', async () => {
    const failure = inTransaction(pool, async (c) => {
      const { rows } = await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
      // The server ends this session while the transaction holds it idle, between two queries:
      // pg reports that as an 'error' event on the checked-out client.
      await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid])
      await new Promise((r) => setTimeout(r, 200))
      await c.query('SELECT 1')
    })
    await expect(failure).rejects.toThrow()

    const again = await inTransaction(pool, async (c) => (await c.query<{ n: number }>('SELECT 2 AS n')).rows)
    expect(again).toEqual([{ n: 2 }])
  })

  it('gives up on a query that outlives the query timeout instead of waiting forever', async () => {
    const short = createPgPool(inject('databaseUrl'), { max: 1, queryTimeoutMs: 300 })
    try {
      // PostgreSQL cancels it itself (57014, its locks released, the connection kept), set through
      // the `options` startup parameter that PgBouncer setups already let through.
      await expect(short.query('SELECT pg_sleep(5)')).rejects.toMatchObject({
        code: '57014',
        message: expect.stringMatching(/statement timeout/),
      })
      expect((await short.query<{ v: string }>('SHOW statement_timeout')).rows).toEqual([
        { statement_timeout: '300ms' },
      ])
      expect((await short.query<{ n: number }>('SELECT 3 AS n')).rows).toEqual([{ n: 3 }])
    } finally {
      await short.end()
    }
  })

  it('applies the given server settings to every connection', async () => {
    const tuned = createPgPool(inject('databaseUrl'), { max: 2, settings: { enable_bitmapscan: 'off' } })
    try {
      const shown = await Promise.all(
        [1, 2].map(
          async () =>
            (await tuned.query<{ v: string }>("SELECT current_setting('enable_bitmapscan') AS v")).rows[0]!.v,
        ),
      )
      expect(shown).toEqual(['off', 'off'])
      expect(
        (await pool.query<{ v: string }>("SELECT current_setting('enable_bitmapscan') AS v")).rows[0]!.v,
      ).toBe('on')
    } finally {
      await tuned.end()
    }
  })
})
