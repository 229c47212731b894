import type { JetStreamClient, NatsConnection } from 'nats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  ANALYTICS_SERVICES,
  analyticsDrained,
  connectEvents,
  counts,
  delivery,
  type Ev,
  ev,
  publishEvent,
} from '../support/analytics-events.js'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'

/*
 * Every event is counted twice at ingest, once in its hour row and once in its day row. A report
 * must read only the rows of the interval asked for (hour rows for `interval=hour`, day rows for
 * `interval=day`), never both, for the counts and the delivery-time histograms alike. The events
 * here span two UTC days (across midnight) and several hours, all in the past, with delivery
 * times chosen inside known histogram slots, so the totals and percentiles are exact.
 */
const { te, client } = useStack(ANALYTICS_SERVICES)
let nc: NatsConnection
let js: JetStreamClient
let alpha: Awaited<ReturnType<typeof createProject>>

const HOUR = 3_600_000
const DAY = 24 * HOUR
const MIN = 60_000
// Two days ago and yesterday (UTC): both before any "now" and inside the 7-day range, also for a
// run that crosses midnight (the reports' own day is read around each request: read()).
const today0 = Math.floor(Date.now() / DAY) * DAY
const D2 = today0 - 2 * DAY
const D1 = today0 - DAY
const at = (day: number, hour: number, minute: number) => new Date(day + hour * HOUR + minute * MIN)
const iso = (ms: number) => new Date(ms).toISOString()
const hourOf = (d: Date) => `${d.toISOString().slice(0, 13)}:00:00.000Z`

// Delivery times inside histogram slots (10 per decade): 90 ms in (10^1.9, 10^2],
// 9,000 ms in (10^3.9, 10^4], 900,000 ms in (10^5.9, 10^6].
const FAST = 90
const SLOW = 9_000
const OLD = 900_000
const bounce = { bounce: { type: 'hard', reason: '550' } }

// Project alpha, by hour (the day before yesterday, D2, then yesterday, D1):
// - D2 22:10 a1-a3 sent (plan:pro), delivered 22:20 in 90 ms each
// - D2 23:50 a4 sent (plan:free); a5 bounced at 23:59 (no email.sent: the bounce counts its send)
// - D1 00:05 a4 delivered in 9,000 ms (sent the day before); a6 sent, delivered 00:10 in 90 ms
// - D1 01:00 a1 opened, clicked twice at 01:10; D1 04:00 a7 deferred; D1 05:30 a7 sent,
//   delivered 05:40 in 9,000 ms
// - 8 days ago: a8 sent and delivered in 900,000 ms (outside 7d, inside 30d)
// Project beta: D1 00:05 b1 sent (plan:pro), delivered 00:20 in 9,000 ms; D1 03:00 b2 bounced.
const ALPHA_HOURS: Record<string, ReturnType<typeof counts>> = {
  [iso(D2 + 22 * HOUR)]: counts({ sent: 3, delivered: 3 }),
  [iso(D2 + 23 * HOUR)]: counts({ sent: 2, bounced: 1 }),
  [iso(D1)]: counts({ sent: 1, delivered: 2 }),
  [iso(D1 + 1 * HOUR)]: counts({ opened: 1, clicked: 2 }),
  [iso(D1 + 4 * HOUR)]: counts({ deferred: 1 }),
  [iso(D1 + 5 * HOUR)]: counts({ sent: 1, delivered: 1 }),
}
const ALPHA_DAYS: Record<string, ReturnType<typeof counts>> = {
  [iso(D2)]: counts({ sent: 5, delivered: 3, bounced: 1 }),
  [iso(D1)]: counts({ sent: 2, delivered: 3, deferred: 1, opened: 1, clicked: 2 }),
}
const ALPHA_WEEK = counts({ sent: 7, delivered: 6, bounced: 1, deferred: 1, opened: 1, clicked: 2 })
const ALL_HOURS = {
  ...ALPHA_HOURS,
  [iso(D1)]: counts({ sent: 2, delivered: 3 }),
  [iso(D1 + 3 * HOUR)]: counts({ sent: 1, bounced: 1 }),
}
const ALL_DAYS = {
  ...ALPHA_DAYS,
  [iso(D1)]: counts({ sent: 4, delivered: 4, bounced: 1, deferred: 1, opened: 1, clicked: 2 }),
}
const ALL_WEEK = counts({ sent: 9, delivered: 7, bounced: 2, deferred: 1, opened: 1, clicked: 2 })

beforeAll(async () => {
  ;({ nc, js } = await connectEvents(te))
  alpha = await createProject(client, 'alpha')
  const beta = await createProject(client, 'beta')
  const A = alpha.project.id
  const B = beta.project.id
  const events: Array<[string, Ev]> = []
  const add = (p: string, e: Ev) => events.push([p, e])
  for (const i of [1, 2, 3]) {
    add(A, ev('email.sent', `a${i}`, `u${i}@ok.example`, at(D2, 22, 10), {}, { plan: 'pro' }))
    add(A, ev('email.delivered', `a${i}`, `u${i}@ok.example`, at(D2, 22, 20), delivery(FAST)))
  }
  add(A, ev('email.sent', 'a4', 'u4@ok.example', at(D2, 23, 50), {}, { plan: 'free' }))
  add(A, ev('email.bounced', 'a5', 'u5@dead.example', at(D2, 23, 59), bounce))
  add(A, ev('email.delivered', 'a4', 'u4@ok.example', at(D1, 0, 5), delivery(SLOW)))
  add(A, ev('email.sent', 'a6', 'u6@ok.example', at(D1, 0, 5)))
  add(A, ev('email.delivered', 'a6', 'u6@ok.example', at(D1, 0, 10), delivery(FAST)))
  add(A, ev('email.opened', 'a1', 'u1@ok.example', at(D1, 1, 0), { userAgent: 'UA' }))
  for (const m of [10, 11])
    add(
      A,
      ev('email.clicked', 'a1', 'u1@ok.example', at(D1, 1, m), { url: 'https://x.test', userAgent: 'UA' }),
    )
  add(A, ev('email.deferred', 'a7', 'u7@ok.example', at(D1, 4, 0)))
  add(A, ev('email.sent', 'a7', 'u7@ok.example', at(D1, 5, 30)))
  add(A, ev('email.delivered', 'a7', 'u7@ok.example', at(D1, 5, 40), delivery(SLOW)))
  add(A, ev('email.sent', 'a8', 'u8@ok.example', at(today0 - 8 * DAY, 12, 0)))
  add(A, ev('email.delivered', 'a8', 'u8@ok.example', at(today0 - 8 * DAY, 12, 5), delivery(OLD)))
  add(B, ev('email.sent', 'b1', 'v1@ok.example', at(D1, 0, 5), {}, { plan: 'pro' }))
  add(B, ev('email.delivered', 'b1', 'v1@ok.example', at(D1, 0, 20), delivery(SLOW)))
  add(B, ev('email.bounced', 'b2', 'v2@dead.example', at(D1, 3, 0), bounce))
  for (const [p, e] of events) await publishEvent(te, js, p, e)
  await analyticsDrained(te, nc)
}, 60_000)

afterAll(async () => {
  await nc?.close()
})

/**
 * Asserts contiguous buckets of `step` from 6 days before `day` (the report's, 00:00 UTC) whose
 * counts are `expected` where named, zero elsewhere.
 */
function expectBuckets(
  buckets: Array<{ bucket: string }>,
  step: number,
  expected: Record<string, ReturnType<typeof counts>>,
  day: number,
) {
  expect(buckets[0]!.bucket).toBe(iso(day - 6 * DAY))
  for (let i = 1; i < buckets.length; i++)
    expect(Date.parse(buckets[i]!.bucket) - Date.parse(buckets[i - 1]!.bucket)).toBe(step)
  for (const b of buckets) expect(b).toEqual({ bucket: b.bucket, ...(expected[b.bucket] ?? counts()) })
  const seen = new Set(buckets.map((b) => b.bucket))
  for (const k of Object.keys(expected)) expect(seen.has(k), k).toBe(true)
}

/**
 * Reads one report, with the current hour taken before and after (the last bucket is one of them)
 * and `day`, the report's (00:00 UTC): read again once if midnight fell between the two. Taken
 * from `today0` (the module's load), the day was wrong for a run that crossed midnight.
 */
async function read(path: string, key: string) {
  for (let tries = 1; ; tries++) {
    const at = Date.now()
    const r = await client.get(path, key)
    const end = Date.now()
    const day = Math.floor(at / DAY) * DAY
    if (day === Math.floor(end / DAY) * DAY || tries === 2) {
      expect(r.status).toBe(200)
      return { body: r.body, before: hourOf(new Date(at)), after: hourOf(new Date(end)), day }
    }
  }
}

describe('analytics granularity', () => {
  it('interval=hour reads the hour rows: exact buckets across midnight UTC, totals and percentiles', async () => {
    const { body, before, after, day } = await read('/v1/analytics?range=7d&interval=hour', alpha.live)
    expect([before, after]).toContain(body.buckets.at(-1).bucket)
    expect(body.buckets).toHaveLength((Date.parse(body.buckets.at(-1).bucket) - (day - 6 * DAY)) / HOUR + 1)
    expectBuckets(body.buckets, HOUR, ALPHA_HOURS, day)
    expect(body.totals).toEqual(ALPHA_WEEK)
    expect(body).toMatchObject({ deliveryRate: 0.8571, bounceRate: 0.1429, complaintRate: 0 })
    // 6 deliveries: 4 × 90 ms, 2 × 9,000 ms. p50 = rank 3 of 4 in (79.43, 100];
    // p95 = rank 1.7 of 2 in (7,943.28, 10,000].
    expect(body.p50DeliveryMs).toBe(95)
    expect(body.p95DeliveryMs).toBe(9691)
    expect(body.topTags).toEqual([
      { value: 'plan:pro', count: 3 },
      { value: 'plan:free', count: 1 },
    ])
    expect(body.topBouncedDomains).toEqual([{ value: 'dead.example', count: 1 }])
  })

  it('interval=day reads the day rows: the same totals and percentiles, nothing counted twice', async () => {
    const hourly = (await read('/v1/analytics?range=7d&interval=hour', alpha.live)).body
    const { body, day } = await read('/v1/analytics?range=7d&interval=day', alpha.live)
    expect(body.buckets).toHaveLength(7)
    expect(body.buckets.at(-1).bucket).toBe(iso(day))
    expectBuckets(body.buckets, DAY, ALPHA_DAYS, day)
    expect(body.totals).toEqual(ALPHA_WEEK)
    const { buckets: _h, interval: _hi, ...hourlyRest } = hourly
    const { buckets: _d, interval: _di, ...dailyRest } = body
    expect(dailyRest).toEqual(hourlyRest)
  })

  it('a longer range by day reaches the older day rows, their deliveries in the percentiles', async () => {
    const { body } = await read('/v1/analytics?range=30d&interval=day', alpha.live)
    expect(body.buckets).toHaveLength(30)
    expect(body.totals).toEqual({ ...ALPHA_WEEK, sent: 8, delivered: 7 })
    // 7 deliveries: 4 × 90, 2 × 9,000, 1 × 900,000 ms.
    expect(body.p50DeliveryMs).toBe(97)
    expect(body.p95DeliveryMs).toBe(928015)
  })

  it('all projects (admin, no ?project) sums projects per bucket and slot, by hour and by day', async () => {
    const hourly = await read('/v1/admin/analytics?range=7d&interval=hour', client.admin)
    expectBuckets(hourly.body.buckets, HOUR, ALL_HOURS, hourly.day)
    const daily = await read('/v1/admin/analytics?range=7d&interval=day', client.admin)
    expectBuckets(daily.body.buckets, DAY, ALL_DAYS, daily.day)
    for (const body of [hourly.body, daily.body]) {
      expect(body.totals).toEqual(ALL_WEEK)
      expect(body).toMatchObject({ deliveryRate: 0.7778, bounceRate: 0.2222 })
      // 7 deliveries: 4 × 90, 3 × 9,000 ms.
      expect(body.p50DeliveryMs).toBe(97)
      expect(body.p95DeliveryMs).toBe(9760)
      expect(body.topTags).toEqual([
        { value: 'plan:pro', count: 4 },
        { value: 'plan:free', count: 1 },
      ])
      expect(body.topBouncedDomains).toEqual([{ value: 'dead.example', count: 2 }])
    }
    const one = await read('/v1/admin/analytics?range=7d&interval=hour&project=alpha', client.admin)
    const own = await read('/v1/analytics?range=7d&interval=hour', alpha.live)
    expect(one.body).toEqual(own.body)
  })
})
