import type { LookupAddress } from 'node:dns'
import { createServer } from 'node:http'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { HttpSender } from './http-sender.js'

// A name whose DNS answer changed after the webhook was saved (DNS rebinding) to the loopback
// address of a listening receiver. The resolver is replaced for `rebound.test` only: a real one
// cannot be made to answer so in a test.
vi.mock('node:dns', async (importOriginal) => {
  const dns = await importOriginal<typeof import('node:dns')>()
  const lookup = (host: string, options: unknown, callback: (...args: unknown[]) => void) => {
    if (host !== 'rebound.test') return (dns.lookup as (...a: unknown[]) => void)(host, options, callback)
    const all: LookupAddress[] = [{ address: '127.0.0.1', family: 4 }]
    if ((options as { all?: boolean }).all) callback(null, all)
    else callback(null, '127.0.0.1', 4)
  }
  return { ...dns, default: { ...dns, lookup }, lookup }
})

let hits = 0
const server = createServer((_req, res) => {
  hits++
  res.writeHead(204).end()
})
let port = 0
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  port = (server.address() as { port: number }).port
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
})

describe('HttpSender and DNS rebinding', () => {
  it('refuses at connect time a name that now resolves to a private address, sending nothing', async () => {
    const sender = new HttpSender({ timeoutMs: 5_000, allowPrivate: false })
    try {
      expect(await sender.post(`http://rebound.test:${port}/hook`, '{}', {})).toEqual({
        outcome: 'blocked',
        responseCode: null,
        responseBody:
          'blocked: rebound.test resolves to 127.0.0.1, a loopback, link-local or private address; set WEBHOOK_ALLOW_PRIVATE=true to allow it',
      })
      expect(hits).toBe(0)
    } finally {
      await sender.close()
    }
  })
})
