import { createDb } from '@mailer/db'
import { start } from '@mailer/gateway/app'
import { loadEnv } from '@mailer/gateway/env'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DashboardSignins } from '../../services/gateway/src/infra/dashboard-signins.js'
import { sql } from '../support/db.js'
import { TcpProxy } from '../support/infra.js'
import { ADMIN_KEY } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'

// The dashboard's sign-in allows 10 failures per client (an IPv4 address, an IPv6 /64) in 5 minutes. A deployment runs
// several gateway replicas behind a load balancer and rolls them out now and then: the limit must
// hold across them (a guesser of the admin key does not get 10 tries per replica) and through a
// restart, and it must not be skipped when PostgreSQL, where it is kept, does not answer.
const { te, stack } = useStack(['auth', 'gateway'], { timeout: 120_000 })
const replicas: Array<Awaited<ReturnType<typeof start>>> = []
let second: string

beforeAll(async () => {
  const replica = await start(loadEnv(stack.env()))
  replicas.push(replica)
  second = replica.url
}, 120_000)
afterAll(async () => {
  for (const r of replicas) await r.stop()
})

interface Answer {
  status: number
  code: string | undefined
  message: string | undefined
  retryAfter: string | null
}

/** A sign-in from `ip` (the address the ingress saw) at gateway `base`. */
async function signIn(base: string, ip: string, key: string): Promise<Answer> {
  const res = await fetch(`${base}/dashboard/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: new URL(base).origin, 'x-forwarded-for': ip },
    body: JSON.stringify({ key }),
  })
  const body = (await res.json()) as { error?: { code: string; message: string } }
  return {
    status: res.status,
    code: body.error?.code,
    message: body.error?.message,
    retryAfter: res.headers.get('retry-after'),
  }
}

describe('the dashboard sign-in limit', () => {
  it('holds across gateway replicas: 10 failures spread over two lock the address out on both', async () => {
    const ip = '10.9.0.1'
    for (let i = 0; i < 10; i++)
      expect((await signIn(i % 2 ? second : stack.gatewayUrl, ip, `guess-${i}`)).status).toBe(401)
    for (const base of [stack.gatewayUrl, second]) {
      const limited = await signIn(base, ip, ADMIN_KEY)
      expect([limited.status, limited.code]).toEqual([429, 'rate_limited'])
    }
    // Another address is not affected.
    expect((await signIn(second, '10.9.0.2', ADMIN_KEY)).status).toBe(200)
  })

  it('counts an IPv6 client per /64: its addresses share one limit, another /64 has its own', async () => {
    // A guesser holding 2001:db8:9:7::/64 takes a new address for every try.
    for (let i = 0; i < 10; i++) {
      const ip = `2001:db8:9:7::${(i + 1).toString(16)}`
      expect((await signIn(i % 2 ? second : stack.gatewayUrl, ip, `guess-${i}`)).status).toBe(401)
    }
    // Any other address of that /64, however it is written, is locked out until the shared window
    // ends, started by the first failure a few seconds ago.
    for (const ip of [
      '2001:DB8:9:7:ffff:ffff:ffff:fffe',
      '2001:0db8:0009:0007:0:0:0:abcd',
      '[2001:db8:9:7::beef]:443',
    ]) {
      const limited = await signIn(second, ip, ADMIN_KEY)
      expect([ip, limited.status, limited.code]).toEqual([ip, 429, 'rate_limited'])
      expect(Number(limited.retryAfter)).toBeGreaterThan(240)
      expect(Number(limited.retryAfter)).toBeLessThanOrEqual(300)
    }
    // The neighbouring /64 is someone else.
    expect((await signIn(stack.gatewayUrl, '2001:db8:9:8::1', ADMIN_KEY)).status).toBe(200)
  })

  it('counts an IPv4 client the same whether its address comes as IPv4 or IPv4-mapped IPv6', async () => {
    for (let i = 0; i < 10; i++) {
      const ip = i % 2 ? '10.9.7.1' : '::ffff:10.9.7.1'
      expect((await signIn(stack.gatewayUrl, ip, `guess-${i}`)).status).toBe(401)
    }
    expect((await signIn(second, '10.9.7.1', ADMIN_KEY)).status).toBe(429)
    // Mapped addresses are not one /64 (::/64) for every IPv4 client.
    expect((await signIn(second, '::ffff:10.9.7.2', ADMIN_KEY)).status).toBe(200)
  })

  it('clears the whole /64 when one of its addresses signs in with the right key', async () => {
    for (let i = 0; i < 9; i++) await signIn(second, `2001:db8:9:9::${i + 1}`, `guess-${i}`)
    expect((await signIn(stack.gatewayUrl, '2001:db8:9:9::aaaa', ADMIN_KEY)).status).toBe(200)
    for (let i = 0; i < 9; i++)
      expect((await signIn(second, `2001:db8:9:9::${i + 1}`, `guess-${i}`)).status).toBe(401)
  })

  it('holds through a restart of the gateway (a rollout)', async () => {
    const ip = '10.9.1.1'
    for (let i = 0; i < 10; i++) expect((await signIn(stack.gatewayUrl, ip, `guess-${i}`)).status).toBe(401)
    await stack.stop('gateway')
    await stack.start('gateway')
    const limited = await signIn(stack.gatewayUrl, ip, ADMIN_KEY)
    expect([limited.status, limited.code]).toEqual([429, 'rate_limited'])
  })

  it('answers Retry-After with the time the lockout has left, not a fixed minute', async () => {
    const ip = '10.9.2.1'
    for (let i = 0; i < 10; i++) await signIn(stack.gatewayUrl, ip, `guess-${i}`)
    const limited = await signIn(second, ip, ADMIN_KEY)
    expect(limited.status).toBe(429)
    // The window started at the first failure, a few seconds ago: most of its 5 minutes are left.
    const wait = Number(limited.retryAfter)
    expect(wait).toBeGreaterThan(240)
    expect(wait).toBeLessThanOrEqual(300)
    // The message (what the sign-in page shows) says how long too, not "later".
    expect(limited.message).toBe(`Too many failed sign-ins; try again in ${Math.ceil(wait / 60)} minutes`)
  })

  it('counts concurrent guesses: a burst from one address gets no more than 10 keys compared', async () => {
    const ip = '10.9.3.1'
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => signIn(i % 2 ? second : stack.gatewayUrl, ip, `guess-${i}`)),
    )
    expect(answers.filter((a) => a.status === 401).length).toBeLessThanOrEqual(10)
    expect(answers.filter((a) => a.status === 429).length).toBeGreaterThanOrEqual(20)
  })

  it('starts again once the window is over, and a sign-in with the right key clears the count', async () => {
    // A lockout whose window ended a second ago: the address may try again.
    await sql(
      te,
      `INSERT INTO dashboard_signin_failures (address, attempts, window_ends_at)
       VALUES ('10.9.4.1', 10, now() - interval '1 second')`,
    )
    expect((await signIn(stack.gatewayUrl, '10.9.4.1', ADMIN_KEY)).status).toBe(200)

    const ip = '10.9.4.2'
    for (let i = 0; i < 9; i++) await signIn(second, ip, `guess-${i}`)
    expect((await signIn(stack.gatewayUrl, ip, ADMIN_KEY)).status).toBe(200)
    for (let i = 0; i < 9; i++) expect((await signIn(second, ip, `guess-${i}`)).status).toBe(401)
  })

  it('is refused with 503 rather than skipped when PostgreSQL cannot be reached', async () => {
    const pgProxy = await TcpProxy.start(Number(new URL(te.databaseUrl).port || 5432))
    try {
      const url = new URL(te.databaseUrl)
      url.host = `127.0.0.1:${pgProxy.port}`
      const replica = await start(loadEnv(stack.env({ DATABASE_URL: url.toString() })))
      replicas.push(replica)
      pgProxy.cut()
      for (const key of ['guess', ADMIN_KEY]) {
        const refused = await signIn(replica.url, '10.9.5.1', key)
        expect([refused.status, refused.code]).toEqual([503, 'service_unavailable'])
      }
      pgProxy.restore()
      expect((await signIn(replica.url, '10.9.5.1', ADMIN_KEY)).status).toBe(200)
    } finally {
      await pgProxy.close()
    }
  }, 60_000)

  it('is kept in PostgreSQL only while its window lasts', async () => {
    await sql(
      te,
      `INSERT INTO dashboard_signin_failures (address, attempts, window_ends_at) VALUES
         ('10.9.6.1', 3, now() - interval '1 second'), ('10.9.6.2', 3, now() + interval '1 minute')`,
    )
    const db = createDb(te.databaseUrl, { poolSize: 1 })
    try {
      expect(await new DashboardSignins(db).prune()).toBeGreaterThanOrEqual(1)
      const left = await sql(
        te,
        `SELECT address FROM dashboard_signin_failures WHERE address IN ('10.9.6.1', '10.9.6.2')`,
      )
      expect(left).toEqual([{ address: '10.9.6.2' }])
    } finally {
      await db.$disconnect()
    }
  })
})
