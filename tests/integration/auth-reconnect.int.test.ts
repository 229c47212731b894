import { start } from '@mailer/auth/app'
import { loadEnv } from '@mailer/auth/env'
import { waitFor } from '@mailer/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { createProject } from '../support/http.js'
import { TcpProxy } from '../support/infra.js'
import { useStack } from '../support/use-stack.js'

// An auth replica whose own NATS connection dropped for a moment misses the invalidations sent
// meanwhile (core pub/sub keeps nothing for an absent subscriber). A key revoked then must not be
// taken by that replica once it is back, whatever its cache held (AUTH_CACHE_TTL_SECONDS: 60).
let proxy: TcpProxy
let replica: Awaited<ReturnType<typeof start>> | undefined
// The gateway hears the revoke itself and drops its own copy of the key: the next request asks auth.
const { te, stack, client } = useStack(['gateway'], {
  before: async () => {
    proxy = await TcpProxy.start(Number(new URL(te.natsUrl).port || 4222))
    // The only auth replica at first, through the proxy.
    replica = await start(loadEnv(stack.env({ NATS_URL: `nats://127.0.0.1:${proxy.port}` })))
  },
  after: () => proxy.close(),
})
afterAll(async () => {
  await replica?.stop()
})

const ready = async (port: number) => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200

describe('an auth replica back from a NATS outage of its own', () => {
  it('refuses a key revoked while it was away', async () => {
    const p = await createProject(client, 'reconnect')
    expect((await client.get('/v1/me', p.live)).status).toBe(200)
    const port = replica!.ops.port

    // Its connection drops; another replica takes the revoke, then stops.
    proxy.cut()
    await waitFor(async () => !(await ready(port)) || null, { what: 'the replica disconnected' })
    await stack.start('auth')
    expect((await client.del(`/v1/admin/api-keys/${p.liveId}`, client.admin)).status).toBe(200)
    await stack.stop('auth')
    proxy.restore()
    await waitFor(async () => (await ready(port)) || null, { timeoutMs: 15_000, what: 'the replica back' })

    const r = await client.get('/v1/me', p.live)
    expect([r.status, r.body.error?.code]).toEqual([401, 'revoked_api_key'])
  })
})
