import { createLogger, Metrics } from '@mailer/observability'
import { useTestEnv, waitFor } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Bus } from '../src/bus.js'

// A cache fed by core NATS broadcasts must hear each one, and be dropped after every reconnect:
// what was broadcast while the connection was down never arrives (core pub/sub keeps nothing for
// an absent subscriber). subscribeInvalidations registers both; each half is checked here.
const te = useTestEnv()
const logger = createLogger({ service: 'invalidations-test', level: 'silent' })
let listener: Bus
let sender: Bus

beforeAll(async () => {
  const bus = (name: string) =>
    Bus.connect({ url: te.natsUrl, prefix: te.natsPrefix, name, logger, metrics: new Metrics(`bus_${name}`) })
  listener = await bus('listener')
  sender = await bus('sender')
})
afterAll(async () => {
  await listener.drain()
  await sender.drain()
})

describe('subscribeInvalidations', () => {
  it('hands each broadcast to onMessage, ignores one it cannot take, and calls onMissed after a reconnect', async () => {
    const heard: unknown[] = []
    let missed = 0
    listener.subscribeInvalidations('cache.invalidate', {
      onMessage: (payload) => {
        if ((payload as { bad?: boolean }).bad) throw new Error('fails its schema')
        heard.push(payload)
      },
      onMissed: () => {
        missed++
      },
    })
    await listener.flush()

    sender.publish('cache.invalidate', { id: 'a' })
    sender.publish('cache.invalidate', { bad: true })
    sender.nc.publish(sender.subject('cache.invalidate'), 'not json')
    sender.publish('cache.invalidate', { id: 'b' })
    await sender.flush()
    await waitFor(() => heard.length === 2 || null, { what: 'the two good broadcasts' })
    expect(heard).toEqual([{ id: 'a' }, { id: 'b' }])
    expect(missed).toBe(0)

    // A real disconnect and reconnect of the listener's connection.
    await listener.nc.reconnect()
    await waitFor(() => missed === 1 || null, { timeoutMs: 15_000, what: 'onMissed after the reconnect' })

    // Still listening once back.
    await listener.flush()
    sender.publish('cache.invalidate', { id: 'c' })
    await sender.flush()
    await waitFor(() => heard.length === 3 || null, { what: 'a broadcast after the reconnect' })
    expect(heard[2]).toEqual({ id: 'c' })
    expect(missed).toBe(1)
  })
})
