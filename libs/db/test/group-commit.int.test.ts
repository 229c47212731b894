import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { TcpProxy } from '../../../tests/support/infra.js'
import { GroupCommit } from '../src/group-commit.js'
import { createPgPool, inTransaction, type PgPool } from '../src/pg-pool.js'
import { isDatabaseUnavailable } from '../src/unavailable.js'

/**
 * A group commit against a real PostgreSQL, reached through a proxy the test can cut. Each write
 * is one transaction that reads its requests as integers, so a request that is not one fails the
 * statement as bad data would.
 */
let proxy: TcpProxy
let pool: PgPool

beforeAll(async () => {
  const url = new URL(inject('databaseUrl'))
  proxy = await TcpProxy.start(Number(url.port || 5432))
  url.host = `127.0.0.1:${proxy.port}`
  pool = createPgPool(url.toString(), { max: 8 })
})
afterAll(async () => {
  await pool.end()
  await proxy.close()
})

const writeMany = (reqs: string[]) =>
  inTransaction(pool, async (c) => {
    const { rows } = await c.query<{ n: number }>('SELECT x::int AS n FROM unnest($1::text[]) AS x', [reqs])
    return rows.map((r) => r.n)
  })

/** Submits `reqs` at once: the first is written alone, the rest wait for it and go together. */
const submitAll = (gc: GroupCommit<string, number>, reqs: string[]) =>
  Promise.allSettled(reqs.map((r) => gc.submit(r)))

describe('GroupCommit against PostgreSQL', () => {
  it('fails a group at once when the database is away: no connection attempt per request', async () => {
    const gc = new GroupCommit(writeMany, { slots: 1, maxItems: 100 })
    proxy.cut()
    try {
      const before = proxy.connections
      const outcomes = await submitAll(gc, ['1', '2', '3', '4', '5'])
      for (const o of outcomes) {
        expect(o.status).toBe('rejected')
        expect(isDatabaseUnavailable((o as PromiseRejectedResult).reason)).toBe(true)
      }
      // One try for the write of '1', one for the group of the other four; retrying each of the
      // four alone would knock four more times on a database that is not there.
      expect(proxy.connections - before).toBe(2)
    } finally {
      proxy.restore()
    }
  })

  it('still writes the requests of a failed group one by one when one of them is bad data', async () => {
    const gc = new GroupCommit(writeMany, { slots: 1, maxItems: 100 })
    const outcomes = await submitAll(gc, ['1', '2', 'three', '4'])
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : 'failed'))).toEqual([1, 2, 'failed', 4])
    const bad = (outcomes[2] as PromiseRejectedResult).reason
    expect(isDatabaseUnavailable(bad)).toBe(false)
    expect(String(bad)).toMatch(/invalid input syntax/)
  })
})
