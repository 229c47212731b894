import { AdminRpcClient } from '@mailer/client'
import { connect, type NatsConnection } from 'nats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { email, projectWithDomain } from '../support/emails.js'
import { TcpProxy } from '../support/infra.js'
import { type SpawnedService, spawnService } from '../support/processes.js'
import { mailerRpc } from '../support/rpc.js'
import { useStack } from '../support/use-stack.js'

/**
 * A request caught on a database that keeps its connections open and answers nothing (a hung
 * server, a partition without resets): the service gives the statement up after
 * DATABASE_QUERY_TIMEOUT_MS and answers 503 `service_unavailable` itself, through Prisma and through
 * its plain pg pools alike, and its shutdown then drains rather than being cut off. Without a
 * statement time-out the handler waited on its query for as long as the connection lived (the
 * gateway gave up with its own 503 at UPSTREAM_TIMEOUT_MS), holding the drain to its deadline.
 * The email service runs as its own process, reaching PostgreSQL through a proxy the test hangs.
 */
// The gateway waits longer than the test for an answer: a 503 comes from the email service.
const { te, stack, client } = useStack(['auth', 'gateway'], {
  overrides: { UPSTREAM_TIMEOUT_MS: '120000' },
  timeout: 90_000,
})
let proxy: TcpProxy
let emailService: SpawnedService
let nc: NatsConnection

beforeAll(async () => {
  proxy = await TcpProxy.start(Number(new URL(te.databaseUrl).port || 5432))
  const db = new URL(te.databaseUrl)
  db.host = `127.0.0.1:${proxy.port}`
  emailService = await spawnService(
    'email',
    stack.env({
      DATABASE_URL: db.toString(),
      DATABASE_QUERY_TIMEOUT_MS: '1500',
      SHUTDOWN_TIMEOUT_SECONDS: '20',
    }),
  )
  nc = await connect({ servers: te.natsUrl })
}, 90_000)
afterAll(async () => {
  await nc?.close()
  await emailService?.kill()
  await proxy?.close()
})

describe('requests against a hung database', () => {
  it('a read (Prisma) and a send (pg pool) answer 503 service_unavailable, over REST and RPC alike; SIGTERM then drains', async () => {
    const p = await projectWithDomain(client, 'hungdb')
    const sent = await client.post('/v1/emails', p.live, email(p.from))
    expect(sent.status).toBe(202)
    const adminRpc = new AdminRpcClient(nc, { prefix: te.natsPrefix, timeoutMs: 15_000 })
    const rpcError = (call: Promise<unknown>) =>
      call.then(
        () => expect.fail('expected an error'),
        (e) => e,
      )
    proxy.hang()
    const [read, send, rpcRead, rpcSend, adminRpcRead] = await Promise.all([
      client.get(`/v1/emails/${sent.body.id}`, p.live),
      client.post('/v1/emails', p.live, email(p.from, { to: 'bob@example.com' })),
      rpcError(mailerRpc(nc, te.natsPrefix, 'hungdb', 'get', sent.body.id)),
      rpcError(mailerRpc(nc, te.natsPrefix, 'hungdb', 'send', email(p.from, { to: 'cy@example.com' }))),
      rpcError(adminRpc.call('email.emails.get', { project: 'hungdb', params: { id: sent.body.id } })),
    ])
    const unavailable = {
      type: 'internal_error',
      code: 'service_unavailable',
      message: 'The database is unavailable; retry shortly',
    }
    for (const r of [read, send]) {
      expect(r.status).toBe(503)
      expect(r.body.error).toMatchObject(unavailable)
    }
    // MailerRpc and AdminRpc answered 500 `internal` (logged as a bug) for the same outage.
    for (const e of [rpcRead, rpcSend, adminRpcRead]) expect(e).toMatchObject({ ...unavailable, status: 503 })
    // A request in hand at SIGTERM ends with its statement, so the drain finishes on its own.
    const inFlight = client.get(`/v1/emails/${sent.body.id}`, p.live)
    await new Promise((r) => setTimeout(r, 300))
    const exited = new Promise<number | null>((resolve) => emailService.proc.once('exit', resolve))
    emailService.proc.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect((await inFlight).status).toBe(503)
    const messages = emailService.logs.map((l) => l.msg)
    expect(messages).toContain('drained, exiting')
    expect(messages).not.toContain('drain did not finish in time; closing connections')
  }, 90_000)
})
