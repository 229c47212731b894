import { useTestEnv, waitFor } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PrivateNats, PrivatePostgres } from '../support/infra.js'
import { Stack } from '../support/stack.js'

/**
 * Operators' view of /readyz and /livez: readiness follows the service's dependencies (it goes red
 * while NATS is down and green again once it is back), liveness does not (a pod is not restarted
 * for an outage that is not its own).
 */
const te = useTestEnv()
let nats: PrivateNats
let pg: PrivatePostgres
let stack: Stack

// Their own NATS and PostgreSQL servers, so the test can take them down (readiness needs no tables).
beforeAll(async () => {
  nats = await PrivateNats.start()
  pg = await PrivatePostgres.start()
  stack = new Stack(te, { NATS_URL: nats.url, DATABASE_URL: pg.url })
  await stack.startAll(['auth', 'dispatcher'])
}, 60_000)
afterAll(async () => {
  await nats.up().catch(() => undefined)
  await stack.stopAll()
  await nats.stop()
  await pg.stop()
})

const SERVICES = ['auth', 'dispatcher'] as const
const probe = async (port: number, path: '/readyz' | '/livez') =>
  (await fetch(`http://127.0.0.1:${port}${path}`)).status

describe('readiness and liveness', () => {
  it('/readyz is 503 while NATS is down and 200 once it is back; /livez stays 200', async () => {
    for (const s of SERVICES) expect(await probe(stack.metricsPort(s), '/readyz')).toBe(200)
    await nats.kill()
    for (const s of SERVICES) {
      const port = stack.metricsPort(s)
      await waitFor(async () => (await probe(port, '/readyz')) === 503, {
        timeoutMs: 10_000,
        what: `${s} not ready`,
      })
      expect(await probe(port, '/livez')).toBe(200)
    }
    await nats.up()
    for (const s of SERVICES) {
      const port = stack.metricsPort(s)
      await waitFor(async () => (await probe(port, '/readyz')) === 200, {
        timeoutMs: 15_000,
        what: `${s} ready again`,
      })
    }
  })

  it('/readyz is 503 while PostgreSQL is down and 200 once it is back; /livez stays 200', async () => {
    for (const s of SERVICES) expect(await probe(stack.metricsPort(s), '/readyz')).toBe(200)
    await pg.crash()
    for (const s of SERVICES) {
      const port = stack.metricsPort(s)
      await waitFor(async () => (await probe(port, '/readyz')) === 503, {
        timeoutMs: 15_000,
        what: `${s} not ready`,
      })
      expect(await probe(port, '/livez')).toBe(200)
    }
    await pg.up()
    for (const s of SERVICES) {
      const port = stack.metricsPort(s)
      await waitFor(async () => (await probe(port, '/readyz')) === 200, {
        timeoutMs: 15_000,
        what: `${s} ready again`,
      })
    }
  })
})
