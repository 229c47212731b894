import { setTimeout as sleep } from 'node:timers/promises'
import { createLogger, Metrics } from '@mailer/observability'
import { useTestEnv, waitFor } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Bus } from '../src/bus.js'
import { consume, ensureConsumer, ensureStream } from '../src/streams.js'

// A consumer's ack wait bounds how long a crashed replica's messages wait for another replica, so
// it is short; a replica still working on a message past it keeps it with heartbeats, so a slow
// handler is never run a second time by another replica meanwhile.
const te = useTestEnv()
const logger = createLogger({ service: 'consume-test', level: 'silent' })
const STREAM = { name: 'ACKWAIT', subjects: ['ackwait.>'] }
const buses: Bus[] = []

async function replica(name: string): Promise<Bus> {
  const bus = await Bus.connect({
    url: te.natsUrl,
    prefix: te.natsPrefix,
    name,
    logger,
    metrics: new Metrics(`consume_${name}`),
  })
  buses.push(bus)
  return bus
}

beforeAll(async () => {
  await ensureStream(await replica('setup'), STREAM)
})
afterAll(async () => {
  await Promise.all(buses.map((b) => b.nc.close()))
})

describe('consume', () => {
  it('keeps a message whose handler outlasts the ack wait: each is handled once, none redelivered', async () => {
    const [a, b] = [await replica('a'), await replica('b')]
    // 3 s: heartbeats every second, so an event-loop stall of up to ~2 s (a loaded machine) keeps
    // the message; with 1 s, a stall over ~0.5 s let it go to the other replica.
    await ensureConsumer(a, STREAM.name, 'slow', { ack_wait: 3_000_000_000 })
    const handled = new Map<number, number>()
    const handle = async (msg: { seq: number; ack(): void }) => {
      handled.set(msg.seq, (handled.get(msg.seq) ?? 0) + 1)
      // Over two ack waits: without heartbeats each message went to the other replica too.
      await sleep(7_000)
      msg.ack()
    }
    const common = { stream: STREAM.name, durable: 'slow', concurrency: 8, logger }
    const running = [
      await consume(a, { ...common, metrics: new Metrics('slow_a'), handle }),
      await consume(b, { ...common, metrics: new Metrics('slow_b'), handle }),
    ]
    for (let i = 0; i < 6; i++) await a.js.publish(a.subject(`ackwait.slow.${i}`), `${i}`)

    const info = await waitFor(
      async () => {
        const i = await a.jsm.consumers.info(a.streamName(STREAM.name), a.consumerName('slow'))
        return i.num_pending === 0 && i.num_ack_pending === 0 ? i : null
      },
      { timeoutMs: 20_000, what: 'every message acknowledged' },
    )
    await Promise.all(running.map((r) => r.stop()))
    expect([...handled.values()]).toEqual([1, 1, 1, 1, 1, 1])
    // Each message was delivered once: a redelivery takes a consumer sequence of its own.
    expect(info.delivered.consumer_seq).toBe(6)
  })
})
