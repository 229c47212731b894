import { waitFor } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TcpProxy } from '../support/infra.js'
import { useStack } from '../support/use-stack.js'

/**
 * Prometheus keeps scraping a pod that runs but is not ready, so MailerServiceDown does not see a
 * service that lost NATS or PostgreSQL: its own metrics say so (`mailer_<service>_dependency_up`,
 * `mailer_<service>_ready`, from the shared runtime), and MailerDependencyDown reads them.
 * The auth service reaches both through proxies the test cuts.
 */
let natsProxy: TcpProxy
let pgProxy: TcpProxy
const { te, stack } = useStack([], {
  after: async () => {
    await natsProxy.close()
    await pgProxy.close()
  },
})

beforeAll(async () => {
  natsProxy = await TcpProxy.start(Number(new URL(te.natsUrl).port || 4222))
  pgProxy = await TcpProxy.start(Number(new URL(te.databaseUrl).port || 5432))
  const db = new URL(te.databaseUrl)
  db.host = `127.0.0.1:${pgProxy.port}`
  await stack.start('auth', { NATS_URL: `nats://127.0.0.1:${natsProxy.port}`, DATABASE_URL: db.toString() })
  // Its GET /health reports PostgreSQL too (the last test).
  await stack.start('gateway', { DATABASE_URL: db.toString() })
})
afterAll(() => {
  natsProxy.restore()
  pgProxy.restore()
})

interface Seen {
  nats: string | undefined
  postgresql: string | undefined
  ready: string | undefined
}

/** The auth service's gauges as its /metrics page shows them. */
async function seen(): Promise<Seen> {
  const page = await (await fetch(`http://127.0.0.1:${stack.metricsPort('auth')}/metrics`)).text()
  const value = (series: string) =>
    new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(page)?.[1]
  return {
    nats: value('mailer_auth_dependency_up{dependency="nats"}'),
    postgresql: value('mailer_auth_dependency_up{dependency="postgresql"}'),
    ready: value('mailer_auth_ready'),
  }
}

const allUp: Seen = { nats: '1', postgresql: '1', ready: '1' }
/** Waits until the page shows `want` (a PostgreSQL ping runs every 5 s), and returns what it showed. */
const until = async (want: Seen, what: string) => {
  let last: Seen | undefined
  try {
    await waitFor(
      async () => {
        last = await seen()
        return JSON.stringify(last) === JSON.stringify(want)
      },
      { timeoutMs: 15_000, intervalMs: 200, what },
    )
  } catch {
    // The assertion names what the page showed instead.
  }
  return last
}

describe('dependency gauges on /metrics', () => {
  it('show NATS down (and the service not ready) while its connection is cut, and up again after', async () => {
    expect(await until(allUp, 'all up')).toEqual(allUp)
    natsProxy.cut()
    const down = { nats: '0', postgresql: '1', ready: '0' }
    expect(await until(down, 'NATS down')).toEqual(down)
    natsProxy.restore()
    expect(await until(allUp, 'NATS back')).toEqual(allUp)
  })

  it('show PostgreSQL down (and the service not ready) while it cannot be reached, and up again after', async () => {
    expect(await until(allUp, 'all up')).toEqual(allUp)
    pgProxy.cut()
    const down = { nats: '1', postgresql: '0', ready: '0' }
    expect(await until(down, 'PostgreSQL down')).toEqual(down)
    pgProxy.restore()
    expect(await until(allUp, 'PostgreSQL back')).toEqual(allUp)
  })

  it('show PostgreSQL down while it hangs: a ping that gets no answer counts as down', async () => {
    expect(await until(allUp, 'all up')).toEqual(allUp)
    pgProxy.hang()
    const down = { nats: '1', postgresql: '0', ready: '0' }
    expect(await until(down, 'PostgreSQL hung')).toEqual(down)
    // Ends the hung exchanges (their queries fail), then lets new connections through.
    pgProxy.cut()
    pgProxy.restore()
    expect(await until(allUp, 'PostgreSQL back')).toEqual(allUp)
  })

  it("the gateway's GET /health answers 503 while PostgreSQL hangs, instead of waiting on it", async () => {
    expect((await fetch(`${stack.gatewayUrl}/health`)).status).toBe(200)
    pgProxy.hang()
    try {
      // Generous against a slow machine; the old /health never answered while the database hung.
      const r = await fetch(`${stack.gatewayUrl}/health`, { signal: AbortSignal.timeout(10_000) })
      expect(r.status).toBe(503)
      expect(await r.json()).toEqual({ ok: false })
    } finally {
      pgProxy.cut()
      pgProxy.restore()
    }
    await waitFor(async () => (await fetch(`${stack.gatewayUrl}/health`)).status === 200, {
      timeoutMs: 15_000,
      what: 'the gateway healthy again',
    })
  })
})
