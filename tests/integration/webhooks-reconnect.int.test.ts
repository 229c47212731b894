import { waitFor } from '@mailer/testing'
import { start } from '@mailer/webhook/app'
import { loadEnv } from '@mailer/webhook/env'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../support/db.js'
import { createProject } from '../support/http.js'
import { TcpProxy } from '../support/infra.js'
import { useStack } from '../support/use-stack.js'
import { EventPublisher, gate, makeEvent, Receiver, verifyWebhook } from '../support/webhooks.js'

// A webhook replica whose own NATS connection dropped for a moment misses the invalidations sent
// meanwhile (core pub/sub keeps nothing for an absent subscriber). A webhook created then must
// still get the events that replica fans out once it is back.
const { te, stack, client, receivers } = useStack(['auth', 'gateway'], {
  testEnv: { WEBHOOK_ALLOW_PRIVATE: 'true' },
  after: async () => {
    await events.close()
    await proxy.close()
  },
})
let events: EventPublisher
let proxy: TcpProxy
const replicas: Array<Awaited<ReturnType<typeof start>>> = []

beforeAll(async () => {
  events = await EventPublisher.connect(te)
  proxy = await TcpProxy.start(Number(new URL(te.natsUrl).port || 4222))
})
afterAll(async () => {
  for (const r of replicas) await r.stop()
})

const ready = async (port: number) => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200

/**
 * The only replica, through the proxy, with a webhook at `rx` whose first attempt `rx` holds open
 * (until `release`), so the second delivery waits claimed in this replica's memory (one attempt at
 * a time per webhook) with the webhook as it was; then its connection is cut.
 */
async function claimedAheadThenCut(slug: string, rx: Receiver) {
  for (const r of replicas.splice(0)) await r.stop()
  const replica = await start(
    loadEnv(
      stack.env({
        NATS_URL: `nats://127.0.0.1:${proxy.port}`,
        WEBHOOK_ENDPOINT_CONCURRENCY: '1',
        // Leases long enough that the claim ahead outlives the outage.
        WEBHOOK_TIMEOUT_MS: '60000',
      }),
    ),
  )
  replicas.push(replica)
  const port = replica.ops.port
  const p = await createProject(client, slug)
  const wh = (await client.post('/v1/webhooks', p.live, { url: rx.url() })).body
  const [e1, e2] = [makeEvent(), makeEvent('email.bounced')]
  await events.publish(p.project.id, e1)
  await waitFor(() => rx.requests.length === 1 || null, { what: 'the first attempt in flight' })
  await events.publish(p.project.id, e2)
  await waitFor(
    async () =>
      (
        await sql(te, 'SELECT 1 FROM webhook_deliveries WHERE event_id = $1 AND locked_until > now()', [
          e2.id,
        ])
      ).length === 1 || null,
    { what: 'the second delivery claimed ahead' },
  )
  proxy.cut()
  await waitFor(async () => !(await ready(port)) || null, { what: 'the replica disconnected' })
  return { port, p, wh, e1, e2 }
}

describe('a webhook replica back from a NATS outage of its own', () => {
  it('fans out to a webhook created while it was away', async () => {
    const [first, second] = [await Receiver.start(), await Receiver.start()]
    receivers.push(first, second)
    // The only replica, through the proxy: it serves the first webhook and caches the project.
    const replica = await start(loadEnv(stack.env({ NATS_URL: `nats://127.0.0.1:${proxy.port}` })))
    replicas.push(replica)
    const port = replica.ops.port
    const p = await createProject(client, 'reconnect')
    expect((await client.post('/v1/webhooks', p.live, { url: first.url() })).status).toBe(201)
    const e1 = makeEvent()
    await events.publish(p.project.id, e1)
    await waitFor(() => first.requests.length === 1 || null, { what: 'the first event delivered' })

    // Its connection drops; another replica takes the creation of a second webhook, then stops.
    proxy.cut()
    await waitFor(async () => !(await ready(port)) || null, { what: 'the replica disconnected' })
    await stack.start('webhook')
    expect((await client.post('/v1/webhooks', p.live, { url: second.url() })).status).toBe(201)
    await stack.stop('webhook')
    proxy.restore()
    await waitFor(async () => (await ready(port)) || null, { timeoutMs: 15_000, what: 'the replica back' })

    const e2 = makeEvent('email.bounced')
    await events.publish(p.project.id, e2)
    await waitFor(() => second.requests.some((r) => r.body.id === e2.id) || null, {
      timeoutMs: 15_000,
      what: 'the event at the webhook created meanwhile',
    })
    await waitFor(() => first.requests.some((r) => r.body.id === e2.id) || null, {
      what: 'the event at the first webhook',
    })
  })

  it('signs what it had claimed ahead with a secret rotated while it was away', async () => {
    const { held, release } = gate()
    const rx = await Receiver.start((_r, n) => (n === 1 ? { status: 200, after: held } : { status: 200 }))
    receivers.push(rx)
    const { port, p, wh, e2 } = await claimedAheadThenCut('reconnect-rotate', rx)
    // Another replica takes the rotation, then stops.
    await stack.start('webhook')
    const rotated = await client.post(`/v1/webhooks/${wh.id}/rotate-secret`, p.live)
    expect(rotated.status).toBe(200)
    await stack.stop('webhook')
    proxy.restore()
    await waitFor(async () => (await ready(port)) || null, { timeoutMs: 15_000, what: 'the replica back' })

    release()
    const second = await waitFor(() => rx.requests.find((r) => r.body.id === e2.id) ?? null, {
      timeoutMs: 15_000,
      what: 'the second event at the webhook',
    })
    const signature = String(second.headers['service-signature'])
    expect(verifyWebhook(signature, rotated.body.secret, second.raw)).toBe(true)
    expect(verifyWebhook(signature, wh.secret, second.raw)).toBe(false)
  }, 60_000)

  it('sends what it had claimed ahead to the new URL with the new secret while still away', async () => {
    const { held, release } = gate()
    const old = await Receiver.start((_r, n) => (n === 1 ? { status: 200, after: held } : { status: 200 }))
    const moved = await Receiver.start()
    receivers.push(old, moved)
    const { port, p, wh, e1, e2 } = await claimedAheadThenCut('reconnect-away', old)
    // Another replica takes a new URL and a rotation. The held attempt ends while the connection
    // is still down, so the second delivery starts then.
    await stack.start('webhook')
    expect((await client.patch(`/v1/webhooks/${wh.id}`, p.live, { url: moved.url() })).status).toBe(200)
    const rotated = await client.post(`/v1/webhooks/${wh.id}/rotate-secret`, p.live)
    expect(rotated.status).toBe(200)
    await stack.stop('webhook')
    release()

    const second = await waitFor(() => moved.requests.find((r) => r.body.id === e2.id) ?? null, {
      timeoutMs: 15_000,
      what: 'the second event at the new URL',
    })
    expect(await ready(port)).toBe(false)
    const signature = String(second.headers['service-signature'])
    expect(verifyWebhook(signature, rotated.body.secret, second.raw)).toBe(true)
    expect(old.requests.map((r) => r.body.id)).toEqual([e1.id])
    proxy.restore()
    await waitFor(async () => (await ready(port)) || null, { timeoutMs: 15_000, what: 'the replica back' })
  }, 60_000)
})
