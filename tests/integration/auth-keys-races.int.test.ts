import { createDb, createPgPool } from '@mailer/db'
import { createLogger } from '@mailer/observability'
import { describe, expect, it } from 'vitest'
import { LastUsedTracker } from '../../services/auth/src/infra/last-used.js'
import { sql as sqlIn, waitersOn } from '../support/db.js'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'

// What several requests or replicas doing the same thing at once must still keep: one revocation
// time, and one lastUsedAt write a minute per key.
const { te, client } = useStack(['auth', 'gateway'])
const sql = (text: string, params: unknown[] = []) => sqlIn(te, text, params)
const until = async (check: () => Promise<boolean>) => {
  for (let i = 0; i < 400; i++) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error('the revokes never all waited for the row')
}

describe('API keys under concurrency', () => {
  it('revokes racing each other (a double click) all answer the first and only revokedAt', async () => {
    const p = await createProject(client, 'double-revoke')
    // The key's row held, so that every revoke has read it unrevoked before any can write.
    const pool = createPgPool(te.databaseUrl)
    const holder = await pool.connect()
    try {
      await holder.query('BEGIN')
      await holder.query('SELECT 1 FROM api_keys WHERE id = $1 FOR UPDATE', [p.liveId])
      const pid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid
      // One after another, each once the one before waits for the row: every one has read the key
      // unrevoked, at a later time than the one before.
      const revokes: Array<Promise<{ status: number; body: any }>> = []
      for (let i = 1; i <= 4; i++) {
        revokes.push(client.del(`/v1/admin/api-keys/${p.liveId}`, client.admin))
        // Waiting for the holder's row, not any lock of the database: another test file's waiter
        // let the next revoke go before this one had read the key.
        await until(async () => (await waitersOn(pool, pid)) >= i)
      }
      await holder.query('COMMIT')
      const answers = await Promise.all(revokes)
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200])
      const [stored] = await sql('SELECT revoked_at FROM api_keys WHERE id = $1', [p.liveId])
      expect([...new Set(answers.map((a) => a.body.revokedAt))]).toEqual([stored.revoked_at.toISOString()])
    } finally {
      holder.release()
      await pool.end()
    }
  })

  it('lastUsedAt is written once a minute per key across replicas, not once per replica', async () => {
    const p = await createProject(client, 'two-replicas')
    const db = createDb(te.databaseUrl)
    const logger = createLogger({ service: 'test', level: 'silent' })
    try {
      // Both replicas cached the key while it had never been used.
      const a = new LastUsedTracker(db, logger)
      const b = new LastUsedTracker(db, logger)
      a.seen(p.liveId, null)
      b.seen(p.liveId, null)
      const t0 = new Date(Date.now() - 30_000)
      a.touch(p.liveId, t0)
      await a.flush()
      // Replica b sees its first use of the key 20 s later: within the minute of a's write.
      b.touch(p.liveId, new Date(t0.getTime() + 20_000))
      await b.flush()
      const read = async () =>
        (
          (await sql('SELECT last_used_at FROM api_keys WHERE id = $1', [p.liveId]))[0].last_used_at as Date
        ).toISOString()
      expect(await read()).toBe(t0.toISOString())
      // A minute on, the next use is written.
      const later = new Date(t0.getTime() + 61_000)
      a.touch(p.liveId, later)
      await a.flush()
      expect(await read()).toBe(later.toISOString())
    } finally {
      await db.$disconnect()
    }
  })
})
