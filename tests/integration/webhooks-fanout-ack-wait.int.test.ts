import { CONSUMERS } from '@mailer/contracts'
import { waitFor } from '@mailer/testing'
import { connect, type NatsConnection } from 'nats'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createProject } from '../support/http.js'
import { type SpawnedService, spawnService } from '../support/processes.js'
import { useStack } from '../support/use-stack.js'
import { EventPublisher, makeEvent, Receiver } from '../support/webhooks.js'

// Events a webhook replica had pulled and not yet fanned out when it was killed (kill -9) reach
// their receivers from another replica within seconds: the fan-out consumer's ack wait is
// WEBHOOK_FANOUT_ACK_WAIT_SECONDS (10), where it was 60 s. A replica still fanning out past the
// ack wait keeps its events with heartbeats, so no other replica takes them meanwhile. The
// fan-out is held up by a lock on `webhooks` (its webhook lookup waits on it), so the replica
// holds the events it pulled, unacknowledged, for as long as the test needs.
let events: EventPublisher
let rx: Receiver
let nc: NatsConnection
let projectId = ''
const spawned: SpawnedService[] = []
const { te, stack, client } = useStack(['auth', 'gateway', 'webhook'], {
  testEnv: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '1000' },
  after: async () => {
    await events.close()
    await rx.close()
    await nc.close()
  },
})

beforeAll(async () => {
  events = await EventPublisher.connect(te)
  rx = await Receiver.start()
  nc = await connect({ servers: te.natsUrl })
  const p = await createProject(client, 'ackwait')
  projectId = p.project.id
  expect((await client.post('/v1/webhooks', p.live, { url: rx.url('/hook') })).status).toBe(201)
  await stack.stop('webhook')
})
afterAll(async () => {
  await Promise.all(spawned.map((s) => s.kill()))
})

/** Holds an exclusive lock on `webhooks` until `release()`: every fan-out waits for it. */
async function lockWebhooks(): Promise<{ release(): Promise<void> }> {
  const url = new URL(te.databaseUrl)
  const schema = url.searchParams.get('schema')!
  url.searchParams.delete('schema')
  const c = new pg.Client({ connectionString: url.toString(), options: `-c search_path=${schema}` })
  await c.connect()
  await c.query('BEGIN')
  await c.query('LOCK TABLE webhooks IN ACCESS EXCLUSIVE MODE')
  return {
    async release() {
      await c.query('COMMIT')
      await c.end()
    },
  }
}

async function fanoutConsumer() {
  const jsm = await nc.jetstreamManager()
  return jsm.consumers.info(
    `${te.natsPrefix.toUpperCase()}_EVENTS`,
    `${te.natsPrefix}-${CONSUMERS.webhookFanout}`,
  )
}

async function publish(n: number): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < n; i++) {
    const event = makeEvent(i % 2 ? 'email.delivered' : 'email.sent')
    ids.push(event.id)
    await events.publish(projectId, event)
  }
  return ids
}

const received = (ids: string[]) => {
  const want = new Set(ids)
  return rx.requests.filter((r) => want.has(r.body.id)).map((r) => r.body.id as string)
}

describe('fan-out ack wait', () => {
  it('events pulled by a killed replica reach their receiver from another replica within seconds', async () => {
    const lock = await lockWebhooks()
    const ids = await publish(20)
    const first = await spawnService('webhook', stack.env())
    spawned.push(first)
    // The first replica has pulled every event and is stuck fanning them out.
    await waitFor(async () => (await fanoutConsumer()).num_ack_pending === 20 || null, {
      what: 'the 20 events pulled by the first replica',
    })
    await first.kill()
    const killedAt = Date.now()
    await lock.release()
    await stack.start('webhook')

    // Well below the former 60 s ack wait; the default of 10 s and the attempts fit with room.
    await waitFor(() => received(ids).length >= ids.length || null, {
      timeoutMs: 30_000,
      what: 'every event at the receiver',
    })
    expect(Date.now() - killedAt).toBeLessThan(30_000)
    expect(received(ids).sort()).toEqual([...ids].sort())
    await stack.stop('webhook')
  }, 60_000)

  it('a replica fanning out for longer than the ack wait keeps its events: none is redelivered', async () => {
    // Every delivery of a message to a replica, the first and each redelivery, takes a consumer sequence.
    const deliveredBefore = (await fanoutConsumer()).delivered.consumer_seq
    // Two replicas: without heartbeats an event would go to the other one after 3 s. Heartbeats
    // go every second, so two can be late before the ack wait ends: with 1 s (one every 500 ms),
    // half a second of a busy event loop in this process, where one replica runs, was enough to
    // have an event redelivered.
    const env = { WEBHOOK_FANOUT_ACK_WAIT_SECONDS: '3' }
    await stack.start('webhook', env)
    spawned.push(await spawnService('webhook', stack.env(env)))
    expect((await fanoutConsumer()).config.ack_wait).toBe(3_000_000_000)
    const lock = await lockWebhooks()
    const ids = await publish(10)
    await waitFor(async () => (await fanoutConsumer()).num_ack_pending === 10 || null, {
      what: 'the 10 events in hand',
    })
    // Over two ack waits with the fan-out stuck on the database (a message without heartbeats
    // comes back after one), and well within the 15 s a statement may wait for the lock.
    await new Promise((r) => setTimeout(r, 8_000))
    const held = await fanoutConsumer()
    await lock.release()
    expect(held.num_redelivered).toBe(0)

    await waitFor(() => received(ids).length >= ids.length || null, {
      timeoutMs: 20_000,
      what: 'every event at the receiver',
    })
    const info = await waitFor(
      async () => {
        const i = await fanoutConsumer()
        return i.num_ack_pending === 0 ? i : null
      },
      { what: 'every event acknowledged' },
    )
    expect(info.delivered.consumer_seq - deliveredBefore).toBe(ids.length)
    expect(received(ids).sort()).toEqual([...ids].sort())
  }, 60_000)
})
