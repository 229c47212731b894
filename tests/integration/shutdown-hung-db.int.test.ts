import { useTestEnv, waitFor } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TcpProxy } from '../support/infra.js'
import { type SpawnedService, spawnService } from '../support/processes.js'
import { Stack } from '../support/stack.js'

/**
 * SIGTERM while PostgreSQL keeps its connections open and answers nothing (a hung server, a
 * partition without resets): the database pools cannot close, and the shutdown must not wait on
 * them past a few seconds. The auth service reaches PostgreSQL through a proxy the test hangs.
 */
const te = useTestEnv()
const stack = new Stack(te)
let pgProxy: TcpProxy
let svc: SpawnedService | undefined

beforeAll(async () => {
  pgProxy = await TcpProxy.start(Number(new URL(te.databaseUrl).port || 5432))
})
afterAll(async () => {
  await svc?.kill()
  await pgProxy.close()
})

describe('shutdown with a hung database', () => {
  it('drains NATS, logs the pools it leaves open and exits 0 before its shutdown deadline', async () => {
    const db = new URL(te.databaseUrl)
    db.host = `127.0.0.1:${pgProxy.port}`
    // Past this the process exits 1 on its own (onShutdown): the old code's outcome.
    svc = await spawnService(
      'auth',
      stack.env({ DATABASE_URL: db.toString(), SHUTDOWN_TIMEOUT_SECONDS: '20' }),
    )
    const s = svc
    pgProxy.hang()
    // /readyz pings PostgreSQL (capped): once it says 503, that ping waits for an answer that
    // never comes, and the pool cannot close.
    await waitFor(async () => (await fetch(`http://127.0.0.1:${s.metricsPort}/readyz`)).status === 503, {
      timeoutMs: 20_000,
      intervalMs: 500,
      what: 'a database ping left hanging',
    })
    const exited = new Promise<number | null>((resolve) => s.proc.once('exit', (code) => resolve(code)))
    s.proc.kill('SIGTERM')
    expect(await exited).toBe(0)
    const messages = s.logs.map((l) => l.msg)
    expect(messages).toContain('drained, exiting')
    // The drain ran to its end: NATS drained, not cut off at the deadline.
    expect(messages).not.toContain('drain did not finish in time; closing connections')
    expect(
      s.logs.filter((l) => l.msg === 'database did not close in time; leaving it open').map((l) => l.what),
    ).toContain('prisma')
  }, 90_000)
})
