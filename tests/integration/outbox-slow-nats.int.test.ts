import { waitFor } from '@mailer/testing'
import { describe, expect, it } from 'vitest'
import { createProject } from '../support/http.js'
import { TcpProxy } from '../support/infra.js'
import { Seeder } from '../support/seed.js'
import { useStack } from '../support/use-stack.js'
import { makeEvent, Receiver } from '../support/webhooks.js'

// The outbox sweeper re-publishes what a process left behind (it died between its commit and the
// publish, or NATS was away). Over a slow path to NATS (30 ms there and back, a NATS in another
// zone, or one busy catching up after an outage) it must still get through a backlog of more
// than one pass: every event left behind reaches the webhook.
let seed: Seeder
let rx: Receiver
let proxy: TcpProxy
const LEFT_BEHIND = 700
const { te, stack, client } = useStack(['auth', 'webhook', 'gateway'], {
  testEnv: { WEBHOOK_ALLOW_PRIVATE: 'true' },
  before: async () => {
    rx = await Receiver.start()
    seed = await Seeder.open(te)
    proxy = await TcpProxy.start(Number(new URL(te.natsUrl).port || 4222), 15)
  },
  after: async () => {
    await seed.close()
    await rx.close()
    await proxy.close()
  },
})

describe('outbox sweeper over a slow path to NATS', () => {
  it('publishes a backlog larger than one pass', async () => {
    const p = await createProject(client, 'slow-nats')
    expect((await client.post('/v1/webhooks', p.live, { url: rx.url() })).status).toBe(201)
    // Committed a minute ago by a process that died before publishing.
    const events = Array.from({ length: LEFT_BEHIND }, () => makeEvent())
    await seed.sql(
      `INSERT INTO outbox (subject, msg_id, payload, created_at)
       SELECT 'events.email.delivered', e->'event'->>'id', e, now() - interval '1 minute'
       FROM jsonb_array_elements($1::jsonb) AS e`,
      [JSON.stringify(events.map((event) => ({ projectId: p.project.id, event })))],
    )
    await stack.start('email', { NATS_URL: `nats://127.0.0.1:${proxy.port}` })

    const got = () => new Set(rx.requests.map((r) => r.body.id as string))
    await waitFor(() => got().size === LEFT_BEHIND || null, {
      timeoutMs: 60_000,
      what: 'every event left behind at the webhook',
    }).catch((err) => {
      throw new Error(`${err.message}: ${got().size} of ${LEFT_BEHIND}`)
    })
    expect([...got()].sort()).toEqual(events.map((e) => e.id).sort())
    await waitFor(
      async () =>
        (await seed.sql<{ n: number }>('SELECT count(*)::int AS n FROM outbox'))[0]!.n === 0 || null,
      { what: 'the outbox empty' },
    )
  }, 90_000)
})
