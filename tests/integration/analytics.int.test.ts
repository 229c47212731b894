import { connect, type JetStreamClient, type NatsConnection } from 'nats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  analyticsDrained,
  counts,
  delivery,
  type Ev,
  ev,
  evtId,
  publishEvent,
} from '../support/analytics-events.js'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'

const { te, stack, client } = useStack(['auth', 'gateway', 'analytics'])
let nc: NatsConnection
let js: JetStreamClient
let alpha: Awaited<ReturnType<typeof createProject>>
let beta: Awaited<ReturnType<typeof createProject>>
let empty: Awaited<ReturnType<typeof createProject>>

const HOUR = 3_600_000
const DAY = 24 * HOUR
const now = Date.now()
// "Today" is one minute ago so that nothing lands in the future, whatever the clock says.
const today = new Date(now - 60_000)
const daysAgo = (n: number) => new Date(now - 60_000 - n * DAY)
const dayOf = (d: Date) => `${d.toISOString().slice(0, 10)}T00:00:00.000Z`
const hourOf = (d: Date) => `${d.toISOString().slice(0, 13)}:00:00.000Z`

const publish = (projectId: string, e: Ev, msgID = e.id) => publishEvent(te, js, projectId, e, msgID)
const drained = () => analyticsDrained(te, nc)

/**
 * One report, with the clock read before and after it (the service reads its own per request):
 * its current hour is one of the two readings'. Read again once if 00:00 UTC fell between them,
 * so that both readings' day is the report's. Taken from `now` (the module's load), the current
 * day was wrong for a run that crossed midnight.
 */
async function read(path: string, key: string) {
  for (let tries = 1; ; tries++) {
    const before = new Date()
    const r = await client.get(path, key)
    const after = new Date()
    if (dayOf(before) === dayOf(after) || tries === 2) {
      expect(r.status).toBe(200)
      return { body: r.body, before, after }
    }
  }
}

// What project alpha sends, today unless noted:
// - 10 emails sent, one recipient each; tags plan:pro ×6, plan:free ×4, campaign:spring ×3
// - 8 delivered (6 × 200 ms, 2 × 5000 ms), 1 of them later complained
// - 2 bounced at dead.example; email 1 deferred twice (one recipient: counts once)
// - 1 rejected, 1 failed, 3 opened, 4 clicks (two on the same email)
// - 2 days ago: 2 sent (plan:pro), 1 delivered in 1000 ms, 1 bounced at old.example
// - 10 days ago: 3 sent; 40 days ago: 1 sent
// Plus duplicates and noise that must not count.
const TODAY = counts({
  sent: 10,
  delivered: 8,
  deferred: 1,
  bounced: 2,
  complained: 1,
  rejected: 1,
  failed: 1,
  opened: 3,
  clicked: 4,
})
const TWO_DAYS_AGO = counts({ sent: 2, delivered: 1, bounced: 1 })
const WEEK = counts({
  sent: 12,
  delivered: 9,
  deferred: 1,
  bounced: 3,
  complained: 1,
  rejected: 1,
  failed: 1,
  opened: 3,
  clicked: 4,
})

beforeAll(async () => {
  ;[alpha, beta, empty] = [
    await createProject(client, 'alpha'),
    await createProject(client, 'beta'),
    await createProject(client, 'empty'),
  ]
  nc = await connect({ servers: te.natsUrl })
  js = nc.jetstream()
  const A = alpha.project.id
  const B = beta.project.id

  const sentEvents: Ev[] = []
  for (let i = 1; i <= 10; i++) {
    const tags: Record<string, string> = { plan: i <= 6 ? 'pro' : 'free' }
    if (i <= 3) tags.campaign = 'spring'
    const domain = i >= 9 ? 'dead.example' : 'ok.example'
    const e = ev(
      'email.sent',
      `email_${i}`,
      `user${i}@${domain}`,
      today,
      { messageId: `<m${i}@alpha.test>` },
      tags,
    )
    sentEvents.push(e)
    await publish(A, ev('email.queued', `email_${i}`, null, today))
    await publish(A, e)
  }
  for (let i = 1; i <= 8; i++)
    await publish(
      A,
      ev('email.delivered', `email_${i}`, `user${i}@ok.example`, today, delivery(i <= 6 ? 200 : 5000)),
    )
  await publish(
    A,
    ev('email.complained', 'email_8', 'user8@ok.example', today, { complaint: { type: 'abuse' } }),
  )
  for (const i of [9, 10])
    await publish(
      A,
      ev('email.bounced', `email_${i}`, `user${i}@Dead.Example`, today, {
        bounce: { type: 'hard', reason: '550' },
      }),
    )
  await publish(
    A,
    ev('email.deferred', 'email_1', 'user1@ok.example', today, {
      delivery: { status: 'deferred', provider: 'smtp', deliveryTimeMs: 30 },
    }),
  )
  await publish(A, ev('email.deferred', 'email_1', 'user1@ok.example', today))
  await publish(A, ev('email.rejected', 'email_11', 'x@ok.example', today))
  await publish(
    A,
    ev('email.failed', 'email_12', null, today, { code: 'retries_exhausted', message: 'gave up' }),
  )
  for (const i of [1, 2, 3])
    await publish(A, ev('email.opened', `email_${i}`, `user${i}@ok.example`, today, { userAgent: 'UA' }))
  for (const i of [1, 1, 2, 3])
    await publish(
      A,
      ev('email.clicked', `email_${i}`, `user${i}@ok.example`, today, {
        url: 'https://x.test',
        userAgent: 'UA',
      }),
    )

  const d2 = daysAgo(2)
  await publish(A, ev('email.sent', 'email_20', 'a@ok.example', d2, {}, { plan: 'pro' }))
  await publish(A, ev('email.sent', 'email_21', 'b@old.example', d2, {}, { plan: 'pro' }))
  await publish(A, ev('email.delivered', 'email_20', 'a@ok.example', d2, delivery(1000)))
  await publish(A, ev('email.bounced', 'email_21', 'b@old.example', d2))
  for (const i of [30, 31, 32])
    await publish(A, ev('email.sent', `email_${i}`, 'c@ok.example', daysAgo(10), {}, { plan: 'old' }))
  await publish(A, ev('email.sent', 'email_40', 'd@ok.example', daysAgo(40)))

  // Idempotency: the same event again (a different msgID gets past JetStream's de-duplication),
  // and a second sent event for a recipient already counted.
  await publish(A, sentEvents[0]!, `${sentEvents[0]!.id}:again`)
  await publish(A, sentEvents[5]!, `${sentEvents[5]!.id}:again`)
  await publish(A, { ...sentEvents[1]!, id: evtId() })
  // Noise: the synthetic webhook test event, a retrying event, and a message that is not an event.
  await publish(
    A,
    ev('email.delivered', 'email_1', 'user1@ok.example', today, { ...delivery(1), test: true }),
  )
  await publish(
    A,
    ev('email.retrying', 'email_5', null, today, { code: 'x', message: 'y', attempt: 1, delaySeconds: 60 }),
  )
  await js.publish(`${te.natsPrefix}.events.email.sent`, 'not json', { msgID: 'garbage-1' })

  // Project beta: 1 sent (plan:pro) and 1 bounce at dead.example, today.
  await publish(B, ev('email.sent', 'email_b1', 'z@dead.example', today, {}, { plan: 'pro' }))
  await publish(B, ev('email.bounced', 'email_b1', 'z@dead.example', today))
  await drained()
}, 60_000)

afterAll(async () => {
  await nc?.close()
})

describe('GET /v1/analytics', () => {
  it('counts each outcome once per email and recipient, over contiguous zero-filled day buckets', async () => {
    const r = await read('/v1/analytics?range=7d&interval=day', alpha.live)
    expect(r.body.range).toBe('7d')
    expect(r.body.interval).toBe('day')
    expect(r.body.totals).toEqual(WEEK)
    expect(r.body.buckets).toHaveLength(7)
    const byBucket = new Map(r.body.buckets.map((b: any) => [b.bucket, b]))
    expect(byBucket.get(dayOf(today))).toEqual({ bucket: dayOf(today), ...TODAY })
    expect(byBucket.get(dayOf(daysAgo(2)))).toEqual({ bucket: dayOf(daysAgo(2)), ...TWO_DAYS_AGO })
    const starts = r.body.buckets.map((b: any) => Date.parse(b.bucket))
    for (let i = 1; i < starts.length; i++) expect(starts[i] - starts[i - 1]).toBe(DAY)
    expect(r.body.buckets.at(-1).bucket).toBe(dayOf(r.after))
    const others = r.body.buckets.filter(
      (b: any) => b.bucket !== dayOf(today) && b.bucket !== dayOf(daysAgo(2)),
    )
    for (const b of others) expect(b).toEqual({ bucket: b.bucket, ...counts() })
  })

  it('rates are n / sent to 4 decimals', async () => {
    const r = await client.get('/v1/analytics?range=7d', alpha.live)
    expect(r.body.deliveryRate).toBe(0.75) // 9 / 12
    expect(r.body.bounceRate).toBe(0.25) // 3 / 12
    expect(r.body.complaintRate).toBe(0.0833) // 1 / 12
  })

  it('percentiles come from the delivery-time histograms', async () => {
    const r = await client.get('/v1/analytics?range=7d', alpha.live)
    // 9 deliveries: 6 × 200 ms, 1 × 1000 ms, 2 × 5000 ms. Slots are 26% wide (10 per decade).
    expect(r.body.p50DeliveryMs).toBeGreaterThan(10 ** 2.3)
    expect(r.body.p50DeliveryMs).toBeLessThanOrEqual(Math.ceil(10 ** 2.4))
    expect(r.body.p95DeliveryMs).toBeGreaterThan(10 ** 3.6)
    expect(r.body.p95DeliveryMs).toBeLessThanOrEqual(Math.ceil(10 ** 3.7))
  })

  it('tops tags of sent emails and bounced recipient domains, most counted first', async () => {
    const r = await client.get('/v1/analytics?range=7d', alpha.live)
    expect(r.body.topTags).toEqual([
      { value: 'plan:pro', count: 8 },
      { value: 'plan:free', count: 4 },
      { value: 'campaign:spring', count: 3 },
    ])
    expect(r.body.topBouncedDomains).toEqual([
      { value: 'dead.example', count: 2 },
      { value: 'old.example', count: 1 },
    ])
  })

  it('longer ranges reach older buckets; the default is 30 days by day', async () => {
    const d30 = await client.get('/v1/analytics', alpha.live)
    expect(d30.body).toMatchObject({ range: '30d', interval: 'day' })
    expect(d30.body.buckets).toHaveLength(30)
    expect(d30.body.totals.sent).toBe(15)
    expect(d30.body.topTags[0]).toEqual({ value: 'plan:pro', count: 8 })
    expect(d30.body.topTags).toContainEqual({ value: 'plan:old', count: 3 })
    const d90 = await client.get('/v1/analytics?range=90d', alpha.live)
    expect(d90.body.buckets).toHaveLength(90)
    expect(d90.body.totals.sent).toBe(16)
    expect(d90.body.deliveryRate).toBe(0.5625) // 9 / 16
  })

  it('hourly buckets cover the same days up to the current hour, with the same totals', async () => {
    const r = await read('/v1/analytics?range=7d&interval=hour', alpha.live)
    expect(r.body.interval).toBe('hour')
    const first = Date.parse(r.body.buckets[0].bucket)
    const last = r.body.buckets.at(-1).bucket
    expect(r.body.buckets[0].bucket).toBe(dayOf(new Date(r.after.getTime() - 6 * DAY)))
    expect([hourOf(r.before), hourOf(r.after)]).toContain(last)
    expect(r.body.buckets).toHaveLength((Date.parse(last) - first) / HOUR + 1)
    expect(r.body.totals).toEqual(WEEK)
    const byBucket = new Map(r.body.buckets.map((b: any) => [b.bucket, b]))
    expect(byBucket.get(hourOf(today))).toEqual({ bucket: hourOf(today), ...TODAY })
    expect(r.body.p50DeliveryMs).toBeGreaterThan(10 ** 2.3)
  })

  it('a test key reads the same project data', async () => {
    const r = await client.get('/v1/analytics?range=7d', alpha.test)
    expect(r.body.totals).toEqual(WEEK)
  })

  it('another project sees only its own events, and a new one sees nothing', async () => {
    const b = await client.get('/v1/analytics?range=7d', beta.live)
    expect(b.body.totals).toEqual(counts({ sent: 1, bounced: 1 }))
    expect(b.body.topTags).toEqual([{ value: 'plan:pro', count: 1 }])
    expect(b.body.topBouncedDomains).toEqual([{ value: 'dead.example', count: 1 }])
    expect(b.body.p50DeliveryMs).toBeNull()

    const e = await client.get('/v1/analytics?range=7d', empty.live)
    expect(e.status).toBe(200)
    expect(e.body.totals).toEqual(counts())
    expect(e.body.buckets).toHaveLength(7)
    expect(e.body).toMatchObject({
      deliveryRate: null,
      bounceRate: null,
      complaintRate: null,
      p50DeliveryMs: null,
      p95DeliveryMs: null,
      topTags: [],
      topBouncedDomains: [],
    })
  })

  it('rejects a bad query with 400 invalid_query naming the parameter', async () => {
    const cases: Array<[string, string]> = [
      ['range=1d', 'range'],
      ['range=7d&range=30d', 'range'],
      ['interval=minute', 'interval'],
    ]
    for (const [qs, param] of cases) {
      const r = await client.get(`/v1/analytics?${qs}`, alpha.live)
      expect(r.status, qs).toBe(400)
      expect(r.body.error).toMatchObject({ type: 'validation_error', code: 'invalid_query', param })
    }
  })

  it('answers any range by the hour: one zero-filled bucket per UTC hour, today’s included', async () => {
    for (const [range, days] of [
      ['30d', 30],
      ['90d', 90],
    ] as const) {
      const r = await client.get(`/v1/analytics?range=${range}&interval=hour`, alpha.live)
      expect(r.status, range).toBe(200)
      expect(r.body).toMatchObject({ range, interval: 'hour' })
      // From 00:00 UTC of the first day up to the current hour.
      const hoursToday = new Date(r.body.buckets.at(-1).bucket).getUTCHours() + 1
      expect(r.body.buckets).toHaveLength((days - 1) * 24 + hoursToday)
      expect(r.body.buckets[0].bucket).toMatch(/T00:00:00\.000Z$/)
    }
    // Without a range (30 days by default), as the day interval is.
    expect((await client.get('/v1/analytics?interval=hour', alpha.live)).status).toBe(200)
  })

  it('needs a project key', async () => {
    expect((await client.get('/v1/analytics')).status).toBe(401)
    expect((await client.get('/v1/analytics', client.admin)).body.error.code).toBe('invalid_api_key')
  })

  it('is mirrored for the admin key under /v1/admin/projects/:slug', async () => {
    const own = await client.get('/v1/analytics?range=7d&interval=hour', alpha.live)
    const mirror = await client.get('/v1/admin/projects/alpha/analytics?range=7d&interval=hour', client.admin)
    expect(mirror.status).toBe(200)
    expect(mirror.body).toEqual(own.body)
    const missing = await client.get('/v1/admin/projects/nope/analytics', client.admin)
    expect(missing.status).toBe(404)
    expect(missing.body.error.code).toBe('project_not_found')
  })
})

describe('GET /v1/admin/analytics', () => {
  it('sums every project without ?project', async () => {
    const r = await client.get('/v1/admin/analytics?range=7d', client.admin)
    expect(r.status).toBe(200)
    expect(r.body.totals).toEqual({ ...WEEK, sent: 13, bounced: 4 })
    expect(r.body.topTags[0]).toEqual({ value: 'plan:pro', count: 9 })
    expect(r.body.topBouncedDomains[0]).toEqual({ value: 'dead.example', count: 3 })
    expect(r.body.deliveryRate).toBe(0.6923) // 9 / 13
    const today = r.body.buckets.find((b: any) => b.bucket === dayOf(new Date(now - 60_000)))
    expect(today).toMatchObject({ sent: 11, bounced: 3 })
  })

  it('narrows to one project with ?project=<slug>', async () => {
    const own = await client.get('/v1/analytics?range=30d', beta.live)
    const r = await client.get('/v1/admin/analytics?range=30d&project=beta', client.admin)
    expect(r.status).toBe(200)
    expect(r.body).toEqual(own.body)
  })

  it('404 project_not_found for an unknown slug; 400 for a bad one; 403 for a project key', async () => {
    const missing = await client.get('/v1/admin/analytics?project=nope', client.admin)
    expect(missing.status).toBe(404)
    expect(missing.body.error).toMatchObject({ code: 'project_not_found', param: 'project' })
    const bad = await client.get('/v1/admin/analytics?project=Not%20A%20Slug', client.admin)
    expect(bad.status).toBe(400)
    expect(bad.body.error).toMatchObject({ code: 'invalid_query', param: 'project' })
    const hourly = await client.get('/v1/admin/analytics?range=30d&interval=hour', client.admin)
    expect(hourly.status).toBe(200)
    expect(hourly.body).toMatchObject({ range: '30d', interval: 'hour' })
    const proj = await client.get('/v1/admin/analytics', alpha.live)
    expect(proj.status).toBe(401)
    expect(proj.body.error.code).toBe('invalid_api_key')
  })
})

describe('ingestion', () => {
  it('exports ingest metrics: by type, duplicates, invalid messages, batch timings, consumer gauges', async () => {
    const text = await (await fetch(`http://127.0.0.1:${stack.metricsPort('analytics')}/metrics`)).text()
    const value = (re: RegExp) => Number(re.exec(text)?.[1] ?? Number.NaN)
    // 10 + 2 + 3 + 1 sent for alpha, 3 duplicates, 1 for beta.
    expect(value(/^mailer_analytics_events_ingested_total\{type="email.sent"\} (\d+)/m)).toBe(20)
    expect(value(/^mailer_analytics_events_ingested_total\{type="email.queued"\} (\d+)/m)).toBe(10)
    // 3 re-sent events, the second deferral, and nothing else.
    expect(value(/^mailer_analytics_events_duplicate_total (\d+)/m)).toBe(4)
    expect(value(/^mailer_analytics_events_invalid_total (\d+)/m)).toBe(1)
    expect(value(/^mailer_analytics_ingest_batch_seconds_count (\d+)/m)).toBeGreaterThan(0)
    expect(text).toContain('mailer_analytics_consumer_pending')
  })

  it('resumes from its durable consumer after a restart, never counting an event twice', async () => {
    await stack.stop('analytics')
    const A = alpha.project.id
    await publish(A, ev('email.sent', 'email_50', 'late@ok.example', today, {}, { plan: 'late' }))
    await stack.start('analytics')
    await drained()
    const r = await client.get('/v1/analytics?range=7d', alpha.live)
    expect(r.body.totals).toEqual({ ...WEEK, sent: 13 })
    expect(r.body.topTags).toContainEqual({ value: 'plan:late', count: 1 })
  })
})
