import { EventsOnStream, newId } from '@mailer/contracts'
import { waitFor } from '@mailer/testing'
import { connect, type NatsConnection } from 'nats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { analyticsDrained } from '../support/analytics-events.js'
import { sql } from '../support/db.js'
import { email, projectWithDomain } from '../support/emails.js'
import { streamEvents, streamMessages } from '../support/streams.js'
import { useStack } from '../support/use-stack.js'
import { metricValue } from '../support/webhooks.js'

// A backlog of opens and clicks (a large broadcast's opens, or what piled up on the TRACKING
// stream while no email replica ran) is recorded in groups, one transaction per group instead of
// one per hit, with every hit still recorded once: repeats, redeliveries and hits for deleted
// emails add nothing, and a hit that cannot be written does not hold up the others. A group's
// events are announced together, in group messages, and webhooks and analytics hear each once.
const { te, stack, client, receiver } = useStack(['auth', 'email', 'gateway', 'webhook', 'analytics'], {
  overrides: {
    WEBHOOK_ALLOW_PRIVATE: 'true',
  },
  receiver: true,
})
let acme: Awaited<ReturnType<typeof projectWithDomain>>
let nc: NatsConnection

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
  const hook = await client.post('/v1/webhooks', acme.live, {
    url: receiver.url(),
    events: ['email.opened', 'email.clicked'],
  })
  expect(hook.status).toBe(201)
  // The hits are an hour old (a backlog), and a webhook hears no event from before it was made: as
  // if made the day before. Nothing of the project has reached the fan-out, which reads it on demand.
  await sql(te, `UPDATE webhooks SET created_at = now() - interval '1 day' WHERE id = $1`, [hook.body.id])
  nc = await connect({ servers: te.natsUrl })
})
afterAll(async () => {
  await nc?.close()
})

const EMAILS = 50
// An hour ago, to the second: within the analytics' range.
const T0 = Math.floor(Date.now() / 1000) * 1000 - 3_600_000
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString()
const hitId = () => newId('event')

type Hit = { kind: 'open' | 'click'; id: string; emailId: string; at: string } & Record<string, unknown>
const open = (emailId: string, s: number): Hit => ({
  kind: 'open',
  id: hitId(),
  emailId,
  at: at(s),
  userAgent: 'Mail/1',
  requestId: 'req_open',
})
const click = (emailId: string, s: number, userAgent = 'Web/2'): Hit => ({
  kind: 'click',
  id: hitId(),
  emailId,
  at: at(s),
  userAgent,
  requestId: 'req_click',
  url: 'https://shop.example/item',
})

/** Publishes straight to the file's TRACKING stream, as the gateway does. */
const publishHit = (hit: Record<string, unknown>, msgID: string) =>
  nc.jetstream().publish(`${te.natsPrefix}.tracking.${String(hit.kind)}`, JSON.stringify(hit), { msgID })

const metric = (name: string, labels = '') =>
  metricValue(stack.metricsPort('email'), `mailer_email_${name}`, labels)
const handled = (kind: string, outcome: string) =>
  metric('tracking_hits_total', `kind="${kind}",outcome="${outcome}"`)

async function sendEmails(n: number): Promise<string[]> {
  const r = await client.post(
    '/v1/emails/batch',
    acme.live,
    Array.from({ length: n }, (_, i) => email(acme.from, { to: `reader-${i}@example.com` })),
  )
  expect(r.status).toBe(200)
  return r.body.data.map((d: { id: string }) => d.id)
}

/** Publishes `hits` while the email service is stopped, then starts it: they wait as one backlog. */
async function asBacklog(publish: () => Promise<void>): Promise<void> {
  await stack.stop('email')
  try {
    await publish()
  } finally {
    await stack.start('email')
  }
}

const eventsOf = async (id: string, type: string) =>
  ((await client.get(`/v1/emails/${id}`, acme.live)).body.events as Array<{ id: string; type: string }>)
    .filter((e) => e.type === type)
    .map((e) => e.id)

describe('a backlog of hits', () => {
  it('is recorded in a few transactions, each hit once', async () => {
    const ids = await sendEmails(EMAILS)
    const [gone] = await sendEmails(1)
    await sql(te, 'DELETE FROM emails WHERE id = $1', [gone])

    // Per email: two opens (the first one counts) and three clicks (the earliest is the first
    // click, though not the first published); every fifth email's first open and first click are
    // delivered twice (a publish repeated past the duplicate window, or a redelivery).
    const plan = ids.map((id, i) => ({
      id,
      opens: [open(id, i), open(id, 600 + i)],
      clicks: [click(id, 300 + i), click(id, 100 + i), click(id, 200 + i)],
      again: i % 5 === 0,
    }))
    const goneHits = [open(gone!, 1), click(gone!, 2)]
    let published = 0
    await asBacklog(async () => {
      for (const p of plan) {
        for (const h of [...p.opens, ...p.clicks]) await publishHit(h, h.id)
        if (p.again) for (const h of [p.opens[0]!, p.clicks[0]!]) await publishHit(h, `${h.id}:again`)
        published += 5 + (p.again ? 2 : 0)
      }
      for (const h of goneHits) await publishHit(h, h.id)
      await publishHit({ kind: 'click', emailId: ids[0] }, hitId())
      published += 3
    })

    const again = plan.filter((p) => p.again).length
    await waitFor(
      async () =>
        (await handled('open', 'recorded')) === EMAILS &&
        (await handled('click', 'recorded')) === 3 * EMAILS &&
        (await handled('open', 'unchanged')) === EMAILS + again + 1 &&
        (await handled('click', 'unchanged')) === again + 1 &&
        (await handled('unknown', 'invalid')) === 1,
      { timeoutMs: 60_000, what: 'every hit handled' },
    )
    expect(published).toBe(5 * EMAILS + 2 * again + 3)

    for (const p of plan) {
      const record = (await client.get(`/v1/emails/${p.id}`, acme.live)).body
      expect(record.openedAt).toBe(p.opens[0]!.at)
      expect(record.firstClickedAt).toBe(p.clicks[1]!.at)
      expect(await eventsOf(p.id, 'email.opened')).toEqual([p.opens[0]!.id])
      expect((await eventsOf(p.id, 'email.clicked')).sort()).toEqual(p.clicks.map((c) => c.id).sort())
    }
    const goneEvents = `SELECT id FROM email_events WHERE email_id = $1 AND type IN ('email.opened', 'email.clicked')`
    expect(await sql(te, goneEvents, [gone])).toEqual([])

    // Each recorded hit is announced once, under its own id.
    const recorded = plan.flatMap((p) => [p.opens[0]!, ...p.clicks]).map((h) => h.id)
    const announced = await waitFor(
      async () => {
        const mine = (await streamEvents(te)).filter((m) => m.event.type.match(/^email\.(opened|clicked)$/))
        return mine.length >= recorded.length ? mine : null
      },
      { timeoutMs: 30_000, what: 'the events announced' },
    )
    expect(announced.map((m) => m.event.id).sort()).toEqual(recorded.sort())

    // The hits went in groups: far fewer write transactions than hits, none of them failed.
    const writes = await metric('tracking_batch_size_count')
    expect(writes).toBeGreaterThan(0)
    expect(writes).toBeLessThanOrEqual(published / 10)
    expect(await metric('tracking_batch_size_sum')).toBe(published - 1)
    expect(await metric('tracking_batch_failures_total')).toBe(0)

    // A group's events went out together (events.group, at most 100 per message): a few
    // messages, not one per event.
    const planned = new Set(ids)
    const carrying = (await streamMessages(te, 'EVENTS')).filter((m) =>
      EventsOnStream.parse(m.data).some(
        (e) => /^email\.(opened|clicked)$/.test(e.event.type) && planned.has(String(e.event.data.emailId)),
      ),
    )
    expect(carrying.every((m) => m.subject === 'events.group')).toBe(true)
    expect(carrying.length).toBeGreaterThan(0)
    expect(carrying.length).toBeLessThanOrEqual(recorded.length / 5)

    // Webhooks and analytics hear each open and click once.
    const hooked = () =>
      receiver.requests
        .filter((r) => planned.has(r.body?.data?.emailId) && /^email\.(opened|clicked)$/.test(r.body?.type))
        .map((r) => r.body.id as string)
    await waitFor(() => hooked().length >= recorded.length, {
      timeoutMs: 60_000,
      what: 'a webhook for every open and click',
    })
    expect(hooked().sort()).toEqual(recorded.sort())
    await analyticsDrained(te, nc)
    const totals = (await client.get('/v1/analytics?range=7d', acme.live)).body.totals
    expect(totals).toMatchObject({ opened: EMAILS, clicked: 3 * EMAILS })
  }, 180_000)

  it('a hit that cannot be written does not hold up the others of its group', async () => {
    const ids = await sendEmails(20)
    const good = ids.map((id, i) => click(id, i))
    // Passes the hit's schema, but PostgreSQL refuses its event (jsonb holds no NUL character).
    const bad = click(ids[0]!, 0, 'Bad\u0000Agent')
    await asBacklog(async () => {
      for (const h of [...good.slice(0, 10), bad, ...good.slice(10)]) await publishHit(h, h.id)
    })

    await waitFor(async () => (await handled('click', 'recorded')) === good.length, {
      timeoutMs: 60_000,
      what: 'the good clicks recorded',
    })
    for (const [i, h] of good.entries()) expect(await eventsOf(ids[i]!, 'email.clicked')).toEqual([h.id])
    await waitFor(async () => (await metric('tracking_hit_failures_total', 'kind="click"')) >= 1, {
      timeoutMs: 30_000,
      what: 'the bad click given back',
    })
    // It was in a group with the others: that group failed and its hits were written one by one.
    expect(await metric('tracking_batch_failures_total')).toBeGreaterThanOrEqual(1)
    expect(await sql(te, 'SELECT id FROM email_events WHERE id = $1', [bad.id])).toEqual([])
  }, 180_000)
})
