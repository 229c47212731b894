import pg from 'pg'
import { describe, expect, inject, it } from 'vitest'
import { useTestEnv } from '../src/test-env.js'
import { waitFor } from '../src/wait-for.js'

const te = useTestEnv({ EXTRA: 'yes' })

describe('useTestEnv', () => {
  it('gives the file its own migrated schema, NATS prefix and service environment', async () => {
    const url = new URL(te.databaseUrl)
    const schema = url.searchParams.get('schema')
    expect(schema).toMatch(/^t_[0-9a-f]{10}$/)
    expect(te.natsPrefix).toBe(`t${schema!.slice(2)}`)
    expect(te.natsUrl).toBe(inject('natsUrl'))
    expect(te.env).toMatchObject({
      DATABASE_URL: te.databaseUrl,
      NATS_PREFIX: te.natsPrefix,
      EXTRA: 'yes',
      NODE_ENV: 'test',
    })

    url.searchParams.delete('schema')
    const c = new pg.Client({ connectionString: url.toString() })
    await c.connect()
    try {
      const { rows } = await c.query(
        `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1 AND table_name IN ('emails', 'projects', 'outbox')`,
        [schema],
      )
      expect(rows[0].n).toBe(3)
    } finally {
      await c.end()
    }
  })
})

describe('waitFor', () => {
  it('returns the first truthy value and names what it waited for on timeout', async () => {
    let n = 0
    expect(await waitFor(() => (++n >= 3 ? n : 0), { intervalMs: 1 })).toBe(3)
    await expect(waitFor(() => false, { timeoutMs: 30, intervalMs: 5, what: 'pigs to fly' })).rejects.toThrow(
      /pigs to fly/,
    )
  })
})
