import { createConnection } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { useStack } from './use-stack.js'

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port }, () => {
      s.destroy()
      resolve(true)
    })
    s.on('error', () => resolve(false))
  })

// No services: what the helper gives on its own, and the order it closes things in.
const seen: string[] = []
// Registered first, so vitest runs it after useStack's afterAll.
afterAll(async () => {
  expect(seen).toEqual(['after: relay up true, receiver up true'])
  expect(await listening(relay.port)).toBe(false)
  expect(await listening(receiver.portNumber)).toBe(false)
})
const { client, relay, receiver, receivers } = useStack([], {
  relay: true,
  receiver: true,
  after: async () => {
    seen.push(
      `after: relay up ${await listening(relay.port)}, receiver up ${await listening(receiver.portNumber)}`,
    )
  },
})

describe('useStack', () => {
  it('starts the relay and the receiver it was asked for, the receiver among those it closes', async () => {
    expect(await listening(relay.port)).toBe(true)
    expect(await listening(receiver.portNumber)).toBe(true)
    expect(receivers).toEqual([receiver])
  })

  it('a client call without a gateway fails with a message that says so', async () => {
    await expect(client.get('/health')).rejects.toThrow(/the gateway is not running/)
  })
})

describe('useStack without the options', () => {
  const bare = useStack([])
  it('refuses a relay or a receiver it was not asked for, by name', () => {
    expect(() => bare.relay).toThrow(/no relay/)
    expect(() => bare.receiver).toThrow(/no receiver/)
  })
})
