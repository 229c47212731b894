import { waitFor } from '@mailer/testing'
import { start } from '@mailer/webhook/app'
import { loadEnv } from '@mailer/webhook/env'
import { beforeAll, describe, expect, it } from 'vitest'
import { createProject } from '../support/http.js'
import { spawnService } from '../support/processes.js'
import { useStack } from '../support/use-stack.js'
import { EventPublisher, makeEvent, Receiver, sleep, sql } from '../support/webhooks.js'

// Leases of claimed webhook deliveries are short (15 s) and renewed while a replica holds them,
// in memory or in flight. A replica killed with deliveries in hand gives them up about 15 s later
// (it was 45 s with the default time-out and prefetch, since the lease had to outlast the wait in
// memory and the attempt), and a live one keeps a delivery however long its attempt takes.
const { te, stack, client, receivers } = useStack(['auth', 'webhook', 'gateway'], {
  testEnv: { WEBHOOK_ALLOW_PRIVATE: 'true' },
  after: () => events.close(),
})
let events: EventPublisher

beforeAll(async () => {
  events = await EventPublisher.connect(te)
})

const leased = async (webhookId: string): Promise<number> => {
  const [row] = await sql(
    te,
    'SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND locked_until > now()',
    [webhookId],
  )
  return row.n
}

type Delivery = { id: string; status: string; attempt: number }
const deliveries = async (p: Awaited<ReturnType<typeof createProject>>, webhookId: string) =>
  (await client.get(`/v1/webhooks/${webhookId}/deliveries`, p.live)).body.data as Delivery[]
const posts = (rx: Receiver, id: string) =>
  rx.requests.filter((r) => r.headers['service-delivery-id'] === id).length

describe('a webhook replica killed with deliveries in hand', () => {
  it('another replica delivers them within about 15 s, not 45 s as with the default time-out before', async () => {
    // Four attempts hang at the receiver (the default four slots of the endpoint), four more wait
    // in the replica's memory behind them; the rest are answered. The hanging attempts get 30 s:
    // with the default 10 s they ended, and the four waiting went out, about 4 s after the check
    // below that they had not, which a loaded machine could overrun. The leases are 15 s whatever
    // the time-out; the former ones, time-out x (1 + prefetch / endpoint slots) + 5 s, would be
    // longer still.
    const rx = await Receiver.start((_, n) => (n <= 4 ? 'hang' : { status: 200, body: 'ok' }))
    receivers.push(rx)
    await stack.stop('webhook')
    const killed = await spawnService('webhook', stack.env({ WEBHOOK_TIMEOUT_MS: '30000' }))
    let p: Awaited<ReturnType<typeof createProject>>
    let wh: { id: string }
    try {
      p = await createProject(client, 'renew-killed')
      wh = (await client.post('/v1/webhooks', p.live, { url: rx.url() })).body
      for (let i = 0; i < 8; i++) await events.publish(p.project.id, makeEvent())
      await waitFor(async () => (await leased(wh.id)) === 8, { what: 'four in flight, four waiting' })
      await waitFor(() => rx.requests.length >= 4 || null, { what: 'four attempts at the receiver' })
      // Every lease renewed: the leases that run out are the last renewed ones.
      const [claimed] = await sql(
        te,
        // As text: a Date would drop the microseconds, and the rows would seem renewed at once.
        'SELECT max(locked_until)::text AS until FROM webhook_deliveries WHERE webhook_id = $1',
        [wh.id],
      )
      await waitFor(
        async () => {
          const [row] = await sql(
            te,
            'SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND locked_until > $2::timestamptz',
            [wh.id, claimed.until],
          )
          return row.n === 8 || null
        },
        { timeoutMs: 15_000, what: 'every lease renewed' },
      )
      expect(rx.requests).toHaveLength(4)
    } finally {
      await killed.kill()
      await stack.start('webhook')
    }
    // The leases end at most 15 s after the kill (renewed 5 s apart), then a poll (1 s) claims them.
    const list = await waitFor(
      async () => {
        const data = await deliveries(p, wh.id)
        return data.length === 8 && data.every((d) => d.status === 'success') ? data : null
      },
      { timeoutMs: 25_000, what: "the killed replica's deliveries, from the other replica" },
    )
    // None of them had an outcome recorded: each is made under its first number, once more for
    // those that hung.
    const hung = new Set(rx.requests.slice(0, 4).map((r) => String(r.headers['service-delivery-id'])))
    for (const d of list)
      expect({ attempt: d.attempt, posts: posts(rx, d.id) }).toEqual({
        attempt: 1,
        posts: hung.has(d.id) ? 2 : 1,
      })
  }, 60_000)

  it('a replica whose attempt outlasts the lease keeps the delivery, and gives it up soon once killed', async () => {
    // The first attempt hangs for longer than a lease (a 30 s time-out lets it); the next is answered.
    const rx = await Receiver.start((_, n) => (n === 1 ? 'hang' : { status: 200, body: 'ok' }))
    receivers.push(rx)
    const env = stack.env({ WEBHOOK_TIMEOUT_MS: '30000' })
    await stack.stop('webhook')
    const slow = await spawnService('webhook', env)
    let p: Awaited<ReturnType<typeof createProject>>
    let wh: { id: string }
    let other: Awaited<ReturnType<typeof start>> | undefined
    try {
      p = await createProject(client, 'renew-live')
      wh = (await client.post('/v1/webhooks', p.live, { url: rx.url() })).body
      await events.publish(p.project.id, makeEvent())
      await waitFor(() => rx.requests.length >= 1 || null, { what: 'the attempt at the receiver' })
      // A second replica looks for due deliveries every second meanwhile.
      other = await start(loadEnv(env))
      // Past the 15 s lease the attempt began with: renewed, it is still the slow replica's.
      await sleep(18_000)
      expect(rx.requests).toHaveLength(1)
      expect(await leased(wh.id)).toBe(1)
    } finally {
      await slow.kill()
    }
    try {
      // Its lease runs out at most 15 s after the kill; the other replica makes the attempt again.
      await waitFor(() => rx.requests.length >= 2 || null, { timeoutMs: 20_000, what: 'the attempt again' })
      const [d] = await waitFor(
        async () => {
          const data = await deliveries(p, wh.id)
          return data[0]?.status === 'success' ? data : null
        },
        { what: 'the delivery recorded' },
      )
      expect(d).toMatchObject({ attempt: 1, status: 'success' })
      expect(rx.requests).toHaveLength(2)
    } finally {
      await other?.stop()
      await stack.start('webhook')
    }
  }, 60_000)
})
