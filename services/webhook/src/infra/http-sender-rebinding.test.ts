import { type LookupAddress, lookup } from 'node:dns'
import { createServer } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpSender } from './http-sender.js'
import type { Resolver } from './url-guard.js'

// A name whose DNS answer changed after the webhook was saved (DNS rebinding) to the loopback
// address of a listening receiver. A real resolver cannot be made to answer so in a test: the
// sender is given one that answers `rebound.test` with 127.0.0.1 and asks the system for the rest.
const rebinding: Resolver = ((host: string, options: unknown, callback: (...args: unknown[]) => void) => {
  if (host !== 'rebound.test') return (lookup as (...a: unknown[]) => void)(host, options, callback)
  const all: LookupAddress[] = [{ address: '127.0.0.1', family: 4 }]
  if ((options as { all?: boolean }).all) callback(null, all)
  else callback(null, '127.0.0.1', 4)
}) as Resolver

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
    const sender = new HttpSender({ timeoutMs: 5_000, allowPrivate: false, resolve: rebinding })
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
