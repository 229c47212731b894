import { useTestEnv, waitFor } from '@mailer/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { TcpProxy } from '../support/infra.js'
import { type SpawnedService, spawnService } from '../support/processes.js'
import { Stack } from '../support/stack.js'
import { EventPublisher, fakeId, insertWebhook, makeEvent, Receiver, sql } from '../support/webhooks.js'

/**
 * SIGTERM while PostgreSQL keeps its connections open and answers nothing (a hung server, a
 * partition without resets): the database pools cannot close, and the work in hand waits on
 * queries that get no answer; the shutdown must not wait on them past a few seconds. Each service
 * reaches PostgreSQL through a proxy of its own that the test hangs.
 */
const te = useTestEnv()
const stack = new Stack(te)
const spawned: Array<{ service: SpawnedService; proxy: TcpProxy }> = []
const receivers: Receiver[] = []

afterAll(async () => {
  for (const { service, proxy } of spawned) {
    await service.kill()
    await proxy.close()
  }
  for (const r of receivers) await r.close()
})

/** Starts `name` as its own process, reaching PostgreSQL through a proxy of its own. */
async function startService(
  name: 'auth' | 'webhook',
  env: Record<string, string> = {},
): Promise<SpawnedService> {
  const proxy = await TcpProxy.start(Number(new URL(te.databaseUrl).port || 5432))
  const db = new URL(te.databaseUrl)
  db.host = `127.0.0.1:${proxy.port}`
  // Past SHUTDOWN_TIMEOUT_SECONDS the process exits 1 on its own (onShutdown).
  const s = await spawnService(
    name,
    stack.env({ SHUTDOWN_TIMEOUT_SECONDS: '20', ...env, DATABASE_URL: db.toString() }),
  )
  spawned.push({ service: s, proxy })
  return s
}

/** The service's database stops answering, its connections left open. */
const hang = (s: SpawnedService) => spawned.find((x) => x.service === s)!.proxy.hang()

/** /readyz pings PostgreSQL (capped): once it says 503, that ping waits for an answer that never comes. */
const pingLeftHanging = (s: SpawnedService) =>
  waitFor(async () => (await fetch(`http://127.0.0.1:${s.metricsPort}/readyz`)).status === 503, {
    timeoutMs: 20_000,
    intervalMs: 500,
    what: 'a database ping left hanging',
  })

/** Sends SIGTERM and answers the exit code. */
function terminate(s: SpawnedService): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => s.proc.once('exit', (code) => resolve(code)))
  s.proc.kill('SIGTERM')
  return exited
}

/** The drain ran to its end: NATS drained, not cut off at the deadline. */
function expectDrained(s: SpawnedService): void {
  const messages = s.logs.map((l) => l.msg)
  expect(messages).toContain('drained, exiting')
  expect(messages).not.toContain('drain did not finish in time; closing connections')
  expect(messages).not.toContain('drain took too long, exiting')
}

const leftOpen = (s: SpawnedService) =>
  s.logs.filter((l) => l.msg === 'database did not close in time; leaving it open').map((l) => l.what)

describe('shutdown with a hung database', () => {
  it('drains NATS, logs the pools it leaves open and exits 0 before its shutdown deadline', async () => {
    const s = await startService('auth')
    hang(s)
    await pingLeftHanging(s)
    expect(await terminate(s)).toBe(0)
    expectDrained(s)
    expect(leftOpen(s)).toContain('prisma')
  }, 90_000)

  it('webhook: gives up on the claim and fan-out inserts in hand, and exits 0 drained within 10 s', async () => {
    const receiver = await Receiver.start()
    receivers.push(receiver)
    const projectId = fakeId('proj')
    await insertWebhook(te, { projectId, url: receiver.url(), secret: 'whsec_hung' })
    const events = await EventPublisher.connect(te)
    try {
      // Its waits on the database (claim, fan-out, webhook pool, Prisma) give up together: one
      // after the other they took 5 s each, 15 s in all, and a 10 s shutdown exited 1 undrained.
      const s = await startService('webhook', {
        WEBHOOK_ALLOW_PRIVATE: 'true',
        SHUTDOWN_TIMEOUT_SECONDS: '10',
      })
      // One delivery sent and recorded: the service's pools hold connections, and the project's
      // webhooks are in memory, so the next event goes straight to the insert.
      await events.publish(projectId, makeEvent())
      await waitFor(
        async () => (await sql(te, `SELECT 1 FROM webhook_deliveries WHERE status = 'success'`)).length === 1,
        { what: 'the first delivery recorded' },
      )
      hang(s)
      // The worker claims every second (WEBHOOK_POLL_MS) and this event's insert follows at once:
      // on the connections the hung server holds, each waits for an answer that never comes.
      await events.publish(projectId, makeEvent())
      await pingLeftHanging(s)
      expect(await terminate(s)).toBe(0)
      expectDrained(s)
      expect(leftOpen(s)).toContain('prisma')
    } finally {
      await events.close()
    }
  }, 90_000)
})
