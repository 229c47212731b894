import { createDb } from '@mailer/db'
import { start } from '@mailer/gateway/app'
import { loadEnv } from '@mailer/gateway/env'
import { waitFor } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DashboardSignouts } from '../../services/gateway/src/infra/dashboard-signouts.js'
import { sql } from '../support/db.js'
import { TcpProxy } from '../support/infra.js'
import { ADMIN_KEY } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'

// A dashboard sign-out must hold on every gateway replica for as long as the session would have
// lasted: one restarted since (a rollout) and one whose NATS connection was down when it was
// announced. A copied cookie (a stolen one) must not come back to life.
const { te, stack } = useStack(['auth', 'gateway'], { after: () => proxy.close(), timeout: 120_000 })
let proxy: TcpProxy
const replicas: Array<Awaited<ReturnType<typeof start>>> = []

beforeAll(async () => {
  proxy = await TcpProxy.start(Number(new URL(te.natsUrl).port || 4222))
}, 120_000)
afterAll(async () => {
  for (const r of replicas) await r.stop()
})

interface Session {
  cookie: string
  csrf: string
}

const originOf = (base: string) => new URL(base).origin

async function signIn(base: string): Promise<Session> {
  const res = await fetch(`${base}/dashboard/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: originOf(base) },
    body: JSON.stringify({ key: ADMIN_KEY }),
  })
  expect(res.status).toBe(200)
  const body = (await res.json()) as { csrfToken: string }
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ')
  return { cookie, csrf: body.csrfToken }
}

const deleteSession = (base: string, s: Session) =>
  fetch(`${base}/dashboard/api/session`, {
    method: 'DELETE',
    headers: { cookie: s.cookie, origin: originOf(base), 'x-csrf-token': s.csrf },
  })

async function signOut(base: string, s: Session): Promise<void> {
  expect((await deleteSession(base, s)).status).toBe(200)
}

/** An admin read through the session, as the dashboard makes them: its status and error code. */
async function read(base: string, s: Session): Promise<[number, string | undefined]> {
  const res = await fetch(`${base}/dashboard/api/v1/admin/projects`, { headers: { cookie: s.cookie } })
  const body = (await res.json()) as { error?: { code: string } }
  return [res.status, body.error?.code]
}

const ready = async (port: number) => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200

describe('a dashboard sign-out', () => {
  it('still holds after the gateway restarts (a rollout), while other sessions go on', async () => {
    const [out, kept] = [await signIn(stack.gatewayUrl), await signIn(stack.gatewayUrl)]
    await signOut(stack.gatewayUrl, out)
    expect(await read(stack.gatewayUrl, out)).toEqual([401, 'invalid_session'])

    await stack.stop('gateway')
    await stack.start('gateway')
    expect(await read(stack.gatewayUrl, out)).toEqual([401, 'invalid_session'])
    expect((await read(stack.gatewayUrl, kept))[0]).toBe(200)
  })

  it('reaches a replica whose NATS connection was down when it was announced', async () => {
    // A second replica, through the proxy; the first one (the stack's) takes the sign-out.
    const replica = await start(loadEnv(stack.env({ NATS_URL: `nats://127.0.0.1:${proxy.port}` })))
    replicas.push(replica)
    const port = replica.rt.ops.port
    const [out, kept] = [await signIn(stack.gatewayUrl), await signIn(replica.url)]
    expect((await read(replica.url, out))[0]).toBe(200)

    proxy.cut()
    await waitFor(async () => !(await ready(port)) || null, { what: 'the replica disconnected' })
    await signOut(stack.gatewayUrl, out)
    expect(await read(stack.gatewayUrl, out)).toEqual([401, 'invalid_session'])
    proxy.restore()
    await waitFor(async () => (await ready(port)) || null, { timeoutMs: 15_000, what: 'the replica back' })

    // Back on the bus, the replica never serves the signed-out session again.
    const [status] = await read(replica.url, out)
    expect(status).not.toBe(200)
    await waitFor(async () => (await read(replica.url, out))[1] === 'invalid_session' || null, {
      what: 'the sign-out known to the replica',
    })
    expect((await read(replica.url, kept))[0]).toBe(200)
  }, 60_000)

  it('that PostgreSQL cannot store is refused with 503 and changes nothing, so that it can be tried again', async () => {
    // A replica whose own path to PostgreSQL can be cut.
    const pgProxy = await TcpProxy.start(Number(new URL(te.databaseUrl).port || 5432))
    try {
      const url = new URL(te.databaseUrl)
      url.host = `127.0.0.1:${pgProxy.port}`
      const replica = await start(loadEnv(stack.env({ DATABASE_URL: url.toString() })))
      replicas.push(replica)
      const s = await signIn(replica.url)

      pgProxy.cut()
      const refused = await deleteSession(replica.url, s)
      expect(refused.status).toBe(503)
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('service_unavailable')
      expect(refused.headers.getSetCookie()).toEqual([])
      // Not signed out anywhere: no replica would know it after a restart.
      for (const base of [replica.url, stack.gatewayUrl]) {
        const res = await fetch(`${base}/dashboard/api/session`, { headers: { cookie: s.cookie } })
        expect(await res.json()).toMatchObject({ signedIn: true })
      }

      pgProxy.restore()
      await signOut(replica.url, s)
      expect(await read(replica.url, s)).toEqual([401, 'invalid_session'])
      await waitFor(async () => (await read(stack.gatewayUrl, s))[1] === 'invalid_session' || null, {
        what: 'the sign-out announced to the other replica',
      })
      await stack.stop('gateway')
      await stack.start('gateway')
      expect(await read(stack.gatewayUrl, s)).toEqual([401, 'invalid_session'])
    } finally {
      await pgProxy.close()
    }
  }, 60_000)

  it('is not taken for granted by a replica that could not read the sign-outs at start: 503 until it has', async () => {
    const s = await signIn(stack.gatewayUrl)
    const pgProxy = await TcpProxy.start(Number(new URL(te.databaseUrl).port || 5432))
    try {
      const url = new URL(te.databaseUrl)
      url.host = `127.0.0.1:${pgProxy.port}`
      pgProxy.cut()
      const replica = await start(loadEnv(stack.env({ DATABASE_URL: url.toString() })))
      replicas.push(replica)
      const session = () => fetch(`${replica.url}/dashboard/api/session`, { headers: { cookie: s.cookie } })
      const early = await session()
      expect(early.status).toBe(503)
      expect(((await early.json()) as { error: { code: string } }).error.code).toBe('service_unavailable')
      pgProxy.restore()
      const signedIn = async () => {
        const res = await session()
        return res.status === 200 && ((await res.json()) as { signedIn: boolean }).signedIn
      }
      await waitFor(async () => (await signedIn()) || null, {
        what: 'the sign-outs read once PostgreSQL answers',
      })
    } finally {
      await pgProxy.close()
    }
  }, 60_000)

  it('is kept in PostgreSQL only until the session would have expired', async () => {
    await sql(
      te,
      `INSERT INTO dashboard_signouts (session_id, expires_at) VALUES
         ('expired-a', now() - interval '1 second'), ('live-b', now() + interval '1 hour')`,
    )
    const db = createDb(te.databaseUrl, { poolSize: 1 })
    try {
      const store = new DashboardSignouts(db)
      expect((await store.unexpired()).map((r) => r.sid)).not.toContain('expired-a')
      expect(await store.prune()).toBe(1)
      const left = await sql(
        te,
        `SELECT session_id FROM dashboard_signouts WHERE session_id IN ('expired-a', 'live-b')`,
      )
      expect(left).toEqual([{ session_id: 'live-b' }])
    } finally {
      await db.$disconnect()
    }
  })
})
