import { createPgPool, type PgPool } from '@mailer/db'
import { measuringPool, type StatementWork, useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { claimEmails } from '../src/infra/claim.js'
import { recordOutcomes } from '../src/infra/record.js'
import { plannedRecords } from './planned-records.js'

// A backlog must not make each claim and outcome write slower: they find their emails by
// primary key, whatever the planner's statistics say (claim-conditions.ts). The statistics here
// are what a busy table has while a broadcast's backlog builds: analyzed when nothing was
// pending, not since (autovacuum off on the table, as a big table's 10 % threshold would be).
// Work is counted in buffer pages read per statement (EXPLAIN ANALYZE BUFFERS), not in time.
const te = useTestEnv()
const HISTORY = 30_000
const BACKLOG = 30_000
let pool: PgPool

const id = (kind: string, n: number) => `email_${kind}_${String(n).padStart(8, '0')}`

beforeAll(async () => {
  pool = createPgPool(te.databaseUrl, { max: 4 })
  await pool.query('ALTER TABLE emails SET (autovacuum_enabled = false)')
  await pool.query(
    `INSERT INTO emails (id, project_id, mode, source, status, from_address, subject, delivered_at)
     SELECT 'email_old_' || lpad(g::text, 8, '0'), 'proj_1', 'live', 'api', 'delivered', 'a@example.com', 's', now()
     FROM generate_series(1, $1::int) g`,
    [HISTORY],
  )
  await pool.query('ANALYZE emails')
  await pool.query(
    `INSERT INTO emails (id, project_id, mode, source, status, from_address, subject)
     SELECT 'email_new_' || lpad(g::text, 8, '0'), 'proj_1', 'live', 'api', 'queued', 'a@example.com', 's'
     FROM generate_series(1, $1::int) g`,
    [BACKLOG],
  )
  await pool.query(
    `INSERT INTO email_recipients (email_id, address, kind, status)
     SELECT 'email_new_' || lpad(g::text, 8, '0'), 'to@example.com', 'to', 'queued' FROM generate_series(1, $1::int) g`,
    [BACKLOG],
  )
}, 120_000)

afterAll(async () => {
  await pool?.end()
})

describe('claims and outcomes under a backlog', () => {
  it('claiming ten emails reads a few pages per email, not the backlog', async () => {
    const measured: StatementWork[] = []
    const ids = Array.from({ length: 10 }, (_, i) => id('new', 1_000 + i))
    const results = await claimEmails(measuringPool(pool, measured, { run: true }), ids, 30)
    expect(results.map((r) => r.kind)).toEqual(ids.map(() => 'claimed'))
    // By primary key: about twenty pages per email (mostly the new index entries of its row).
    expect(measured[0]?.pages, measured[0]?.plan).toBeLessThan(400)
    expect(measured[0]?.scansOf('emails')).toEqual(['Index Scan emails_pkey'])
  })

  it("an outcome write reads a few pages per email, not the table's", async () => {
    const ids = Array.from({ length: 10 }, (_, i) => id('new', 2_000 + i))
    const claimed = await claimEmails(pool, ids, 30)
    const measured: StatementWork[] = []
    // What the relay's 250 for each email makes of it (the dispatcher's own planning).
    const records = plannedRecords(claimed, { stage: 'message', code: 250, text: '250 2.0.0 Ok' })
    const written = await recordOutcomes(measuringPool(pool, measured, { run: true }), records)
    expect(written.every((w) => w !== null)).toBe(true)
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n FROM emails WHERE id = ANY($1) AND status = 'delivered'`,
      [ids],
    )
    expect(rows[0].n).toBe(10)
    expect(measured[0]?.pages, measured[0]?.plan).toBeLessThan(400)
    expect(new Set(measured[0]?.scansOf('emails'))).toEqual(new Set(['Index Scan emails_pkey']))
  })
})
