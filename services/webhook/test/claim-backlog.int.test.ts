import { createDb, createPgPool, type Db, type PgPool } from '@mailer/db'
import { measuringPool, type StatementWork, useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DeliveryStore } from '../src/infra/delivery-store.js'

// A slow endpoint's backlog: its webhook holds all its slots in this replica (saturated), its
// due deliveries are the oldest, and another webhook's few deliveries lie behind them in time
// order. A claim must reach those without reading the backlog (delivery-claim-sql.ts): the same
// work with 50,000 rows in the backlog as with 5,000, whatever the statistics say. Work is counted
// in buffer pages per claim (EXPLAIN ANALYZE BUFFERS, rolled back), not in time.
const te = useTestEnv()
const SLOW = 'wh_slow_00000000000000000000000'
const FAST = 'wh_fast_00000000000000000000000'
const PER_WEBHOOK = 28
let db: Db
let pool: PgPool

/** `n` due deliveries of the slow webhook, older than any other (numbered from `from`). */
async function slowBacklog(from: number, n: number): Promise<void> {
  await pool.query(
    `INSERT INTO webhook_deliveries (id, webhook_id, project_id, event_id, event_type, status, next_attempt_at)
     SELECT 'dlv_slow_' || lpad(g::text, 8, '0'), $1, 'proj_1', 'evt_slow_' || g, 'email.sent', 'pending',
            now() - interval '1 hour' + g * interval '1 ms'
     FROM generate_series($2::int, $3::int) g`,
    [SLOW, from, from + n - 1],
  )
}

/** A claim of this replica, which holds the slow webhook's limit already. */
const claim = (store: DeliveryStore) => store.claim(32, new Map([[SLOW, PER_WEBHOOK]]), PER_WEBHOOK, 15_000)

beforeAll(async () => {
  db = createDb(te.databaseUrl)
  pool = createPgPool(te.databaseUrl, { max: 4 })
  await pool.query(
    `INSERT INTO webhooks (id, project_id, url, events, enabled, secret, updated_at)
     VALUES ($1, 'proj_1', 'https://slow.example.com/hook', '{*}', true, 'whsec_slow', now()),
            ($2, 'proj_1', 'https://fast.example.com/hook', '{*}', true, 'whsec_fast', now())`,
    [SLOW, FAST],
  )
  await pool.query(
    `INSERT INTO webhook_deliveries (id, webhook_id, project_id, event_id, event_type, status, next_attempt_at)
     SELECT 'dlv_fast_' || lpad(g::text, 8, '0'), $1, 'proj_1', 'evt_fast_' || g, 'email.sent', 'pending', now() - interval '1 second'
     FROM generate_series(1, 20) g`,
    [FAST],
  )
  // Statistics as a queue table's lag behind its backlog: taken before the backlog came (a big
  // table is analyzed again only once a tenth of it has changed), so the plans cannot rely on them.
  await pool.query('ALTER TABLE webhook_deliveries SET (autovacuum_enabled = false)')
  await pool.query('ANALYZE webhook_deliveries')
}, 60_000)

afterAll(async () => {
  await pool?.end()
  await db?.$disconnect()
})

describe('claims behind a saturated webhook', () => {
  it("reach the other webhook's deliveries with the same work whatever the backlog", async () => {
    const work: StatementWork[] = []
    const measuring = new DeliveryStore(db, measuringPool(pool, work, { run: false }))
    await slowBacklog(1, 5_000)
    await claim(measuring)
    await slowBacklog(5_001, 45_000)
    await claim(measuring)
    const [small, large] = work.map((w) => w.pages) as [number, number]
    // Ten times the backlog, about the same pages (filtering row by row read ten times as many).
    expect(large, `pages: ${small} with 5,000, ${large} with 50,000`).toBeLessThan(small * 1.5 + 50)

    const claimed = await claim(new DeliveryStore(db, pool))
    expect(claimed.map((d) => d.webhookId)).toEqual(Array(20).fill(FAST))
    expect(claimed.map((d) => d.url)).toEqual(Array(20).fill('https://fast.example.com/hook'))
  }, 60_000)
})
