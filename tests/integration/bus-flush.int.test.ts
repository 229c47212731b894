import { coalesceFlushes } from '@mailer/bus'
import { useTestEnv, waitFor } from '@mailer/testing'
import { connect, type NatsConnection } from 'nats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// What a service publishes from many callbacks of one event-loop turn (a gateway forwarding 20
// HTTP requests that arrived together) leaves in one socket write, in order, none lost.
const te = useTestEnv()
const subject = () => `${te.natsPrefix}.flush`
let receiver: NatsConnection
const open: NatsConnection[] = []

beforeAll(async () => {
  receiver = await connect({ servers: te.natsUrl })
  open.push(receiver)
})
afterAll(async () => {
  await Promise.all(open.map((nc) => nc.close()))
})

/** Counts the connection's socket writes until `stop()`, which answers the count. */
function countWrites(nc: NatsConnection): { count(): number; stop(): number } {
  const transport = (nc as unknown as { protocol: { transport: { send(frame: Uint8Array): void } } }).protocol
    .transport
  const send = transport.send.bind(transport)
  let writes = 0
  transport.send = (frame) => {
    writes++
    send(frame)
  }
  return {
    count: () => writes,
    stop: () => {
      transport.send = send
      return writes
    },
  }
}

/** Publishes `n` messages, each from its own callback of one loop turn; counts socket writes. */
async function publishFromCallbacks(nc: NatsConnection, topic: string, n: number): Promise<number> {
  const writes = countWrites(nc)
  await new Promise<void>((resolve) => {
    for (let i = 0; i < n; i++) setImmediate(() => nc.publish(topic, String(i)))
    setImmediate(() => setImmediate(resolve))
  })
  await nc.flush()
  // The flush's own PING is one more write.
  return writes.stop() - 1
}

async function received(topic: string, n: number): Promise<{ got: string[]; done: Promise<void> }> {
  const got: string[] = []
  const sub = receiver.subscribe(topic, { max: n, callback: (_e, m) => got.push(m.string()) })
  await receiver.flush()
  return { got, done: sub.closed.then(() => undefined) }
}

describe('publishes made in one event-loop turn', () => {
  it('leave in one socket write with coalesceFlushes, in order', async () => {
    const nc = await connect({ servers: te.natsUrl })
    open.push(nc)
    coalesceFlushes(nc)
    const topic = `${subject()}.one`
    const { got, done } = await received(topic, 20)
    expect(await publishFromCallbacks(nc, topic, 20)).toBe(1)
    await done
    expect(got).toEqual(Array.from({ length: 20 }, (_, i) => String(i)))
  })

  it("past the client's 32 KiB threshold are written at once, not held for the turn", async () => {
    const nc = await connect({ servers: te.natsUrl })
    open.push(nc)
    coalesceFlushes(nc)
    const topic = `${subject()}.big`
    const { got, done } = await received(topic, 20)
    const big = 'x'.repeat(20_000)
    const writes = countWrites(nc)
    // One callback, 20 messages of 20 KB: written as the buffer passes 32 KiB, about every second one.
    for (let i = 0; i < 20; i++) nc.publish(topic, big)
    expect(writes.count()).toBeGreaterThanOrEqual(9)
    await nc.flush()
    writes.stop()
    await done
    expect(got).toHaveLength(20)
  })

  it('leave in a write each without it (what the change saves)', async () => {
    const nc = await connect({ servers: te.natsUrl })
    open.push(nc)
    const topic = `${subject()}.each`
    const { got, done } = await received(topic, 20)
    expect(await publishFromCallbacks(nc, topic, 20)).toBe(20)
    await done
    expect(got).toHaveLength(20)
  })

  it('request-reply still answers, and a drain still sends what was published last', async () => {
    const responder = await connect({ servers: te.natsUrl })
    const requester = await connect({ servers: te.natsUrl })
    open.push(responder)
    coalesceFlushes(responder)
    coalesceFlushes(requester)
    const topic = `${subject()}.rpc`
    responder.subscribe(topic, { callback: (_e, m) => m.respond(`re:${m.string()}`) })
    await responder.flush()
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) => requester.request(topic, String(i), { timeout: 5_000 })),
    )
    expect(answers.map((m) => m.string())).toEqual(['re:0', 're:1', 're:2', 're:3', 're:4'])

    const { got } = await received(`${subject()}.last`, 1)
    requester.publish(`${subject()}.last`, 'bye')
    await requester.drain()
    await waitFor(() => got.length === 1)
    expect(got).toEqual(['bye'])
  })
})
