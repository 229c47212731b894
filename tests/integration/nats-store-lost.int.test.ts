import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { useTestEnv, waitFor } from '@mailer/testing'
import { simpleParser } from 'mailparser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { api, createProject } from '../support/http.js'
import { PrivateNats } from '../support/infra.js'
import { Seeder } from '../support/seed.js'
import { TestRelay } from '../support/smtp-relay.js'
import { Stack } from '../support/stack.js'
import { Receiver } from '../support/webhooks.js'

// NATS comes back without its JetStream store (a pod without a persistent volume, a lost disk, a
// store wiped by hand): the streams and durable consumers are gone. The services, which stay up
// through the outage, declare them again, so what is accepted afterwards is sent and announced, and
// what is clicked afterwards is recorded.
const te = useTestEnv()
let nats: PrivateNats
let stack: Stack
let relay: TestRelay
let rx: Receiver
let seed: Seeder
let client: ReturnType<typeof api>
let live: string
const DOMAIN = 'mail.store-lost.test'

beforeAll(async () => {
  nats = await PrivateNats.start()
  relay = await TestRelay.start()
  rx = await Receiver.start()
  seed = await Seeder.open(te)
  stack = new Stack(te, { NATS_URL: nats.url, WEBHOOK_ALLOW_PRIVATE: 'true' })
  await stack.start('dispatcher', { MAIL_TRANSPORT: 'smtp', SMTP_URL: relay.url })
  await stack.startAll(['auth', 'email', 'webhook', 'gateway'])
  client = api(stack.gatewayUrl)
  const p = await createProject(client, 'store-lost')
  live = p.live
  await seed.domain(p.project.id, DOMAIN)
  expect((await client.post('/v1/webhooks', live, { url: rx.url() })).status).toBe(201)
}, 60_000)
afterAll(async () => {
  await nats.up().catch(() => undefined)
  await stack.stopAll()
  await nats.stop()
  await seed.close()
  await relay.stop()
  await rx.close()
})

/** Sends as a careful client does: the same idempotency key again after a 503. */
async function send(key: string, to: string, extra: Record<string, unknown> = {}): Promise<string> {
  return waitFor(
    async () => {
      const r = await client.post(
        '/v1/emails',
        live,
        { from: `hi@${DOMAIN}`, to, subject: key, text: 'x', ...extra },
        { 'idempotency-key': key },
      )
      if (r.status === 202) return r.body.id as string
      if (r.status !== 503) throw new Error(`send: ${r.status} ${JSON.stringify(r.body)}`)
      return null
    },
    { timeoutMs: 30_000, what: `${key} accepted` },
  )
}

const delivered = (id: string) =>
  waitFor(
    async () => {
      const r = await client.get(`/v1/emails/${id}`, live)
      return r.body.status === 'delivered' ? true : null
    },
    { timeoutMs: 45_000, what: `${id} delivered` },
  )

const announced = (id: string) =>
  waitFor(
    () => rx.requests.some((r) => r.body?.type === 'email.delivered' && r.body?.data?.emailId === id) || null,
    { timeoutMs: 45_000, what: `email.delivered of ${id} at the webhook` },
  )

describe('NATS restarted without its JetStream store', () => {
  it('an email accepted afterwards is delivered and its events reach the webhook', async () => {
    const before = await send('before', 'before@example.com')
    await delivered(before)
    await announced(before)

    await nats.kill()
    for (const f of readdirSync(nats.dir)) rmSync(join(nats.dir, f), { recursive: true, force: true })
    await nats.up()
    await sleep(1000)

    const after = await send('after', 'after@example.com')
    await delivered(after)
    await announced(after)
    expect(relay.deliveryCounts().get(`${after} after@example.com`)).toBe(1)

    // The TRACKING stream and the email service's consumer of it are back too: a click is recorded.
    const tracked = await send('tracked', 'tracked@example.com', {
      html: '<a href="https://shop.example/x">x</a>',
      trackClicks: true,
    })
    const d = await waitFor(() => relay.forEmail(tracked)[0], { timeoutMs: 45_000, what: 'tracked delivery' })
    const link = /<a href="([^"]+\/t\/c\/[^"]+)"/.exec(String((await simpleParser(d.raw)).html))![1]!
    const click = await fetch(stack.gatewayUrl + new URL(link).pathname, { redirect: 'manual' })
    expect(click.status).toBe(302)
    await waitFor(
      () =>
        rx.requests.some((r) => r.body?.type === 'email.clicked' && r.body?.data?.emailId === tracked) ||
        null,
      { timeoutMs: 45_000, what: 'email.clicked at the webhook' },
    )
  }, 240_000)
})
