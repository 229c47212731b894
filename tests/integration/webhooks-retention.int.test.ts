import { waitFor } from '@mailer/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'
import { EventPublisher, fakeId, makeEvent, metricValue, sql } from '../support/webhooks.js'

// The shortest retention allowed (8 days) and a pruner that runs every second; deliveries are
// made old by moving their creation time back.
const { te, stack, client, receiver } = useStack(['auth', 'webhook', 'gateway'], {
  testEnv: {
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_DELIVERY_RETENTION_DAYS: '8',
    WEBHOOK_PRUNE_INTERVAL_SECONDS: '1',
  },
  receiver: true,
  after: () => events.close(),
})
let events: EventPublisher

beforeAll(async () => {
  events = await EventPublisher.connect(te)
})

const listed = async (key: string, webhookId: string) =>
  ((await client.get(`/v1/webhooks/${webhookId}/deliveries`, key)).body.data as any[]).map((d) => d.eventId)
const succeeded = async (key: string, webhookId: string) =>
  ((await client.get(`/v1/webhooks/${webhookId}/deliveries`, key)).body.data as any[]).filter(
    (d) => d.status === 'success',
  ).length
const age = (eventId: string, webhookId: string, days: number) =>
  sql(
    te,
    `UPDATE webhook_deliveries SET created_at = now() - ($3::int * interval '1 day')
     WHERE event_id = $1 AND webhook_id = $2`,
    [eventId, webhookId, days],
  )
const payloads = async (...eventIds: string[]) =>
  (
    (await sql(te, `SELECT event_id FROM webhook_payloads WHERE event_id = ANY($1::text[])`, [
      eventIds,
    ])) as any[]
  )
    .map((r) => r.event_id)
    .sort()

describe('delivery retention and stored payloads', () => {
  it('deletes finished deliveries past the retention, keeps pending ones, and a payload until its last delivery goes', async () => {
    const p = await createProject(client, 'retention')
    const a = (await client.post('/v1/webhooks', p.live, { url: receiver.url('/a') })).body
    // B does not take `email.sent`: A's delivery is the only one that needs `onlyA`'s payload.
    const b = (
      await client.post('/v1/webhooks', p.live, {
        url: receiver.url('/b'),
        events: ['email.delivered', 'email.bounced'],
      })
    ).body
    const shared = makeEvent('email.delivered')
    const onlyA = makeEvent('email.sent')
    const waiting = makeEvent('email.bounced')
    for (const e of [shared, onlyA, waiting]) await events.publish(p.project.id, e)
    await waitFor(() => (receiver.requests.length === 5 ? true : null), { what: 'five deliveries' })
    // Recorded, not only made: a success written after the update below made `waiting` finished
    // too (a loaded machine can record an answer after the test has listed the deliveries).
    await waitFor(async () => ((await succeeded(p.live, a.id)) === 3 ? true : null), {
      what: "A's three deliveries recorded",
    })
    await waitFor(async () => ((await succeeded(p.live, b.id)) === 2 ? true : null), {
      what: "B's two deliveries recorded",
    })
    // A's delivery of `waiting` is still waiting for a retry, nine days on.
    await sql(
      te,
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now() + interval '1 hour'
       WHERE event_id = $1 AND webhook_id = $2`,
      [waiting.id, a.id],
    )
    const before = await metricValue(stack.metricsPort('webhook'), 'mailer_webhook_deliveries_pruned_total')

    for (const e of [shared, onlyA, waiting]) await age(e.id, a.id, 9)
    await age(shared.id, b.id, 7) // within the retention
    await waitFor(async () => ((await listed(p.live, a.id)).length === 1 ? true : null), {
      what: "A's finished old deliveries pruned",
      timeoutMs: 10_000,
    })
    expect(await listed(p.live, a.id)).toEqual([waiting.id])
    expect((await listed(p.live, b.id)).sort()).toEqual([shared.id, waiting.id].sort())
    // `onlyA` had no other delivery; `shared` is still needed by B's.
    expect(await payloads(shared.id, onlyA.id, waiting.id)).toEqual([shared.id, waiting.id].sort())
    expect(await metricValue(stack.metricsPort('webhook'), 'mailer_webhook_deliveries_pruned_total')).toBe(
      before + 2,
    )

    await age(shared.id, b.id, 9)
    await waitFor(async () => ((await listed(p.live, b.id)).length === 1 ? true : null), {
      what: "B's old delivery pruned",
      timeoutMs: 10_000,
    })
    expect(await payloads(shared.id, onlyA.id, waiting.id)).toEqual([waiting.id])
    const gone = await client.get(`/v1/webhooks/${a.id}/deliveries?limit=100`, p.live)
    expect(gone.status).toBe(200)
    expect(gone.body.data.map((d: any) => d.status)).toEqual(['pending'])
  })

  it("deleting two webhooks of a project at once leaves none of their events' payloads behind", async () => {
    const p = await createProject(client, 'retention-race')
    const a = (await client.post('/v1/webhooks', p.live, { url: receiver.url('/ra') })).body
    const b = (await client.post('/v1/webhooks', p.live, { url: receiver.url('/rb') })).body
    const sent = Array.from({ length: 5 }, () => makeEvent('email.delivered'))
    for (const e of sent) await events.publish(p.project.id, e)
    const ids = sent.map((e) => e.id)
    await waitFor(async () => ((await payloads(...ids)).length === 5 ? true : null), { what: 'the payloads' })
    await waitFor(async () => ((await listed(p.live, b.id)).length === 5 ? true : null))
    // Each deletion looks for the other webhook's deliveries before dropping a payload: at the
    // same moment, each would still see the other's and keep them all.
    const [da, db] = await Promise.all([
      client.del(`/v1/webhooks/${a.id}`, p.live),
      client.del(`/v1/webhooks/${b.id}`, p.live),
    ])
    expect([da.status, db.status]).toEqual([200, 200])
    expect(await payloads(...ids)).toEqual([])
  })

  it('a delivery whose webhook is gone is dropped when claimed, with the payload only it needed', async () => {
    // What a fan-out racing the webhook's deletion leaves behind: the deletion did not see it.
    const p = await createProject(client, 'retention-gone')
    const event = makeEvent('email.delivered')
    const delivery = fakeId('whd')
    await sql(te, `INSERT INTO webhook_payloads (event_id, payload) VALUES ($1, $2::jsonb)`, [
      event.id,
      JSON.stringify(event),
    ])
    await sql(
      te,
      `INSERT INTO webhook_deliveries (id, webhook_id, project_id, event_id, event_type, attempt, status, next_attempt_at)
       VALUES ($1, $2, $3, $4, $5, 0, 'pending', now())`,
      [delivery, fakeId('wh'), p.project.id, event.id, event.type],
    )
    await waitFor(
      async () =>
        ((await sql(te, `SELECT 1 FROM webhook_deliveries WHERE id = $1`, [delivery])) as unknown[])
          .length === 0
          ? true
          : null,
      { what: 'the orphan delivery claimed and dropped' },
    )
    expect(await payloads(event.id)).toEqual([])
  })
})
