import { createPgPool, type Db, type PgPool } from '@mailer/db'
import { useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { report } from '../../services/analytics/src/handlers/routes.js'
import { AggregateStore } from '../../services/analytics/src/infra/aggregate-store.js'

/*
 * `GET /v1/admin/analytics` without `?project` sums every project. `analytics_buckets` keeps every
 * project's hourly and daily rows for good, keyed (project, granularity, start): a report of the
 * last days of all projects must not read that whole history, which grows with every hour of
 * every project. The store runs here over the real PostgreSQL, its statements once as they are
 * and once under EXPLAIN (ANALYZE, BUFFERS) to count the pages they touch.
 */
const te = useTestEnv()
let pool: PgPool
/**
 * The "now" of the history and of every report here, one clock reading: the rows were dated by
 * the database's clock and the reports by their own, so a run across 00:00 UTC missed a day.
 */
const at = new Date()
const PROJECTS = 20
const HISTORY_DAYS = 365
const DAY = 86_400_000

/** A Db for AggregateStore: each statement run as is through pg (bigint sums come as text). */
const plainDb = () =>
  ({
    $queryRawUnsafe: async (text: string, ...params: unknown[]) => (await pool.query(text, params)).rows,
  }) as unknown as Db

/** A Db that answers no rows but adds up the buffers each statement touched. */
function explainingDb(pages: number[]): Db {
  return {
    $queryRawUnsafe: async (text: string, ...params: unknown[]) => {
      const r = await pool.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, params)
      const plan = r.rows[0]['QUERY PLAN'][0].Plan
      pages.push(plan['Shared Hit Blocks'] + plan['Shared Read Blocks'])
      return []
    },
  } as unknown as Db
}

beforeAll(async () => {
  pool = createPgPool(te.databaseUrl, { max: 4 })
  // A year of history for each project: an hourly and a daily row per hour and day, one send each
  // hour, so a day holds 24 sends; the last 7 days also hold one delivery (200 ms) a day.
  await pool.query(
    `INSERT INTO analytics_buckets (project_id, granularity, bucket_start, sent, delivered, delivery_hist)
     SELECT 'project_' || p, 'hour', date_trunc('hour', $3::timestamptz) - h * interval '1 hour', 1, 0, NULL
     FROM generate_series(1, $1::int) p, generate_series(0, $2::int * 24 - 1) h
     ORDER BY h, p`,
    [PROJECTS, HISTORY_DAYS, at],
  )
  const hist = `{${Array.from({ length: 82 }, (_, i) => (i === 24 ? 1 : 0)).join(',')}}`
  await pool.query(
    `INSERT INTO analytics_buckets (project_id, granularity, bucket_start, sent, delivered, delivery_hist)
     SELECT 'project_' || p, 'day', date_trunc('day', $4::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - d * interval '1 day',
            24, CASE WHEN d < 7 THEN 1 ELSE 0 END, CASE WHEN d < 7 THEN $3::int[] END
     FROM generate_series(1, $1::int) p, generate_series(0, $2::int - 1) d
     ORDER BY d, p`,
    [PROJECTS, HISTORY_DAYS, hist, at],
  )
  await pool.query('ANALYZE analytics_buckets')
}, 120_000)
afterAll(async () => {
  await pool?.end()
})

describe('analytics of all projects', () => {
  it('sums every project over the range', async () => {
    const r = await report(new AggregateStore(plainDb()), null, { range: '7d', interval: 'day' }, at)
    expect(r.buckets).toHaveLength(7)
    expect(r.totals.sent).toBe(PROJECTS * 7 * 24)
    expect(r.totals.delivered).toBe(PROJECTS * 7)
    expect(r.p50DeliveryMs).toBe(225)
    expect(r.buckets[0]!.bucket).toBe(new Date(Math.floor(at.getTime() / DAY) * DAY - 6 * DAY).toISOString())
  })

  it('tops only the range’s days: a tag of a send dated tomorrow (a clock ahead) waits for its day', async () => {
    // The bucket of such a send is past the last bucket, so `sent` leaves it out until its day.
    await pool.query(
      `INSERT INTO analytics_dimensions (project_id, day, kind, value, count) VALUES
         ('project_1', ($1::timestamptz AT TIME ZONE 'UTC')::date, 'tag', 'plan:today', 2),
         ('project_1', ($1::timestamptz AT TIME ZONE 'UTC')::date + 1, 'tag', 'plan:tomorrow', 5),
         ('project_1', ($1::timestamptz AT TIME ZONE 'UTC')::date + 1, 'bounced_domain', 'later.example', 1)`,
      [at],
    )
    const r = await report(new AggregateStore(plainDb()), 'project_1', { range: '7d', interval: 'day' }, at)
    expect(r.topTags).toEqual([{ value: 'plan:today', count: 2 }])
    expect(r.topBouncedDomains).toEqual([])
  })

  it('reads the rows of the range, not every project’s whole history', async () => {
    const [{ n }] = (await pool.query(`SELECT pg_relation_size('analytics_buckets') / 8192 AS n`)).rows
    const tablePages = Number(n)
    const pages: number[] = []
    await report(new AggregateStore(explainingDb(pages)), null, { range: '7d', interval: 'day' }, at)
    const touched = pages.reduce((a, b) => a + b, 0)
    // The range's rows are 7 days × 20 projects; the table holds a year of hours for each.
    expect(tablePages).toBeGreaterThan(1_000)
    expect(touched, `pages touched per query: ${pages.join(', ')}`).toBeLessThan(tablePages / 10)
  })
})
