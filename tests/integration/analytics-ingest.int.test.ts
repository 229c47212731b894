import { waitFor } from '@mailer/testing'
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
  publishEventGroup,
} from '../support/analytics-events.js'
import { sql as sqlIn } from '../support/db.js'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'

/** Ingestion under stress: a poisoned event in a batch, and a burst written in batches. */
const { te, stack, client } = useStack(ANALYTICS_SERVICES)
let nc: NatsConnection
let js: JetStreamClient
const today = new Date(Date.now() - 60_000)
const sql = (text: string, params: unknown[] = []) => sqlIn(te, text, params)
const publish = (projectId: string, e: Ev) => publishEvent(te, js, projectId, e)
const drained = () => analyticsDrained(te, nc)

beforeAll(async () => {
  ;({ nc, js } = await connectEvents(te))
})
afterAll(async () => {
  await nc?.close()
})

describe('analytics ingestion under stress', () => {
  it('one event that cannot be written does not hold back its batch, and is counted once it can', async () => {
    const p = await createProject(client, 'poison')
    // Make the database refuse exactly one event's idempotency key.
    await sql(
      `ALTER TABLE analytics_processed_events ADD CONSTRAINT poison CHECK (event_id NOT LIKE '%email_poison%')`,
    )
    try {
      const good = [1, 2, 3, 4, 5].map((i) => ev('email.sent', `email_ok${i}`, `ok${i}@p.example`, today))
      await Promise.all(
        [...good.slice(0, 2), ev('email.sent', 'email_poison', 'x@p.example', today), ...good.slice(2)].map(
          (e) => publish(p.project.id, e),
        ),
      )
      await waitFor(async () => (await client.get('/v1/analytics?range=7d', p.live)).body.totals.sent === 5, {
        timeoutMs: 10_000,
        what: 'the good events of the batch',
      })
      const text = await (await fetch(`http://127.0.0.1:${stack.metricsPort('analytics')}/metrics`)).text()
      expect(Number(/^mailer_analytics_ingest_batch_failures_total (\d+)/m.exec(text)?.[1])).toBeGreaterThan(
        0,
      )
    } finally {
      await sql('ALTER TABLE analytics_processed_events DROP CONSTRAINT poison')
    }
    await drained()
    const r = await client.get('/v1/analytics?range=7d', p.live)
    expect(r.body.totals.sent).toBe(6)
  })

  it('writes a burst in batches, one transaction each', async () => {
    const bulk = await createProject(client, 'bulk')
    const events: Ev[] = []
    for (let i = 0; i < 1500; i++) {
      events.push(
        ev('email.sent', `email_bulk${i}`, `r${i}@bulk.example`, today, {}, { batch: String(i % 3) }),
      )
      events.push(
        ev('email.delivered', `email_bulk${i}`, `r${i}@bulk.example`, today, delivery(100 + (i % 100) * 10)),
      )
    }
    for (let i = 0; i < events.length; i += 500) {
      await Promise.all(events.slice(i, i + 500).map((e) => publish(bulk.project.id, e)))
    }
    await drained()
    const r = await client.get('/v1/analytics?range=7d', bulk.live)
    expect(r.body.totals).toEqual(counts({ sent: 1500, delivered: 1500 }))
    expect(r.body.topTags).toEqual([
      { value: 'batch:0', count: 500 },
      { value: 'batch:1', count: 500 },
      { value: 'batch:2', count: 500 },
    ])
    // Delivery times are 100 … 1090 ms, evenly: the median is near 600 ms.
    expect(r.body.p50DeliveryMs).toBeGreaterThan(450)
    expect(r.body.p50DeliveryMs).toBeLessThan(750)
    const text = await (await fetch(`http://127.0.0.1:${stack.metricsPort('analytics')}/metrics`)).text()
    const batches = Number(/^mailer_analytics_ingest_batch_size_count (\d+)/m.exec(text)?.[1])
    const messages = Number(/^mailer_analytics_ingest_batch_size_sum (\d+)/m.exec(text)?.[1])
    expect(messages).toBeGreaterThanOrEqual(3000)
    expect(messages / batches).toBeGreaterThan(10)
  })

  it('a group message counts each event for its own project; an invalid event is left out alone', async () => {
    const a = await createProject(client, 'group-a')
    const b = await createProject(client, 'group-b')
    const before = Number(
      /^mailer_analytics_events_invalid_total (\d+)/m.exec(
        await (await fetch(`http://127.0.0.1:${stack.metricsPort('analytics')}/metrics`)).text(),
      )?.[1] ?? 0,
    )
    const bad = ev('email.sent', 'email_grp_bad', 'bad@g.example', today)
    bad.createdAt = 'not a date'
    await publishEventGroup(te, js, [
      { projectId: a.project.id, event: ev('email.sent', 'email_grp1', 'one@g.example', today) },
      {
        projectId: a.project.id,
        event: ev('email.delivered', 'email_grp1', 'one@g.example', today, delivery(200)),
      },
      { projectId: b.project.id, event: ev('email.sent', 'email_grp2', 'two@g.example', today) },
      { projectId: b.project.id, event: bad },
      // Not an event at all (a producer's bug): left out alone too, not the whole group.
      { projectId: b.project.id, event: null as any },
    ])
    await drained()
    expect((await client.get('/v1/analytics?range=7d', a.live)).body.totals).toEqual(
      counts({ sent: 1, delivered: 1 }),
    )
    expect((await client.get('/v1/analytics?range=7d', b.live)).body.totals).toEqual(counts({ sent: 1 }))
    const text = await (await fetch(`http://127.0.0.1:${stack.metricsPort('analytics')}/metrics`)).text()
    expect(Number(/^mailer_analytics_events_invalid_total (\d+)/m.exec(text)?.[1])).toBe(before + 2)
  })

  it('a group holding an event that cannot be written still counts the others at once', async () => {
    const p = await createProject(client, 'group-poison')
    await sql(
      `ALTER TABLE analytics_processed_events ADD CONSTRAINT poison2 CHECK (event_id NOT LIKE '%email_gpoison%')`,
    )
    try {
      await publishEventGroup(te, js, [
        { projectId: p.project.id, event: ev('email.sent', 'email_gok1', 'a@gp.example', today) },
        { projectId: p.project.id, event: ev('email.sent', 'email_gpoison', 'x@gp.example', today) },
        { projectId: p.project.id, event: ev('email.sent', 'email_gok2', 'b@gp.example', today) },
      ])
      await waitFor(async () => (await client.get('/v1/analytics?range=7d', p.live)).body.totals.sent === 2, {
        timeoutMs: 10_000,
        what: 'the good events of the group',
      })
    } finally {
      await sql('ALTER TABLE analytics_processed_events DROP CONSTRAINT poison2')
    }
    // Redelivered, the group counts the one missing event only.
    await drained()
    await waitFor(async () => (await client.get('/v1/analytics?range=7d', p.live)).body.totals.sent === 3, {
      timeoutMs: 10_000,
      what: 'the poisoned event once it can be written',
    })
    expect((await client.get('/v1/analytics?range=7d', p.live)).body.totals.sent).toBe(3)
  })
})
