import { createLogger } from '@mailer/observability'
import { describe, expect, it } from 'vitest'
import type { Bus } from './bus.js'
import { type RouteHandler, serveRoutes } from './route-handlers.js'

/** A Bus as serveRoutes uses it: the handlers it serves, and a logger whose lines are kept. */
function fakeBus() {
  const lines: Record<string, unknown>[] = []
  const served = new Map<string, RouteHandler>()
  const bus = {
    logger: createLogger({ service: 'auth' }, { write: (s: string) => lines.push(JSON.parse(s)) }),
    serve: (subject: string, _schema: unknown, handler: RouteHandler) => served.set(subject, handler),
  } as unknown as Bus
  return { bus, lines, served }
}

const caller = { requestId: 'req_audit', via: 'admin', project: null, apiKeyId: null, mode: 'live' } as const

describe('the audit trail of admin changes', () => {
  it('logs each admin write that succeeded, with the request id and the ids it named, never the body or answer', async () => {
    const { bus, lines, served } = fakeBus()
    serveRoutes(bus, 'auth', {
      'api.auth.keys.create': async () => ({ id: 'key_1', key: 'fs_live_SECRETSECRETSECRETSECRETSECRET12' }),
      'api.auth.keys.list': async () => ({ data: [] }),
      'api.auth.keys.revoke': async () => {
        throw new Error('nope')
      },
    })
    await served.get('api.auth.keys.create')!({
      caller,
      params: { slug: 'acme' },
      query: {},
      body: { name: 'ci key', mode: 'live' },
      headers: {},
    })
    await served.get('api.auth.keys.list')!({ caller, params: {}, query: { project: 'acme' }, headers: {} })
    await expect(
      served.get('api.auth.keys.revoke')!({ caller, params: { id: 'key_1' }, query: {}, headers: {} }),
    ).rejects.toThrow()
    // One line: the create. A read is no change, and a change that failed did not happen.
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({
      level: 'info',
      msg: 'admin change',
      requestId: 'req_audit',
      route: 'api.auth.keys.create',
      via: 'admin',
      params: { slug: 'acme' },
    })
    expect(JSON.stringify(lines[0])).not.toMatch(/SECRET|ci key/)
  })
})
