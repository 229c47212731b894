import { afterAll, describe, expect, it } from 'vitest'
import { tcpOpen as listening } from './infra.js'
import { useStack } from './use-stack.js'

// No services: what the helper gives on its own, and the order it closes things in.
const seen: string[] = []
// Registered first, so vitest runs it after useStack's afterAll.
afterAll(async () => {
  expect(seen).toEqual(['after: seeder closed, relay up true, receiver up true'])
  expect(await listening(relay.port)).toBe(false)
  expect(await listening(receiver.portNumber)).toBe(false)
})
const { client, relay, receiver, receivers, seed } = useStack([], {
  relay: true,
  receiver: true,
  seed: true,
  after: async () => {
    const seeder = await seed.sql('SELECT 1').then(
      () => 'open',
      () => 'closed',
    )
    const up = `relay up ${await listening(relay.port)}, receiver up ${await listening(receiver.portNumber)}`
    seen.push(`after: seeder ${seeder}, ${up}`)
  },
})

describe('useStack', () => {
  it('starts the relay, the receiver and the seeder it was asked for, the receiver among those it closes', async () => {
    expect(await listening(relay.port)).toBe(true)
    expect(await listening(receiver.portNumber)).toBe(true)
    expect(receivers).toEqual([receiver])
    expect(await seed.sql('SELECT 1 AS one')).toEqual([{ one: 1 }])
  })

  it('a client call without a gateway fails with a message that says so', async () => {
    await expect(client.get('/health')).rejects.toThrow(/the gateway is not running/)
  })
})

describe('useStack without the options', () => {
  const bare = useStack([])
  it('refuses a relay, a receiver or a seeder it was not asked for, by name', () => {
    expect(() => bare.relay).toThrow(/no relay/)
    expect(() => bare.receiver).toThrow(/no receiver/)
    expect(() => bare.seed).toThrow(/no seeder/)
  })
})
