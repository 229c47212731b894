import { setTimeout as sleep } from 'node:timers/promises'
import { waitFor } from '@mailer/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { type SpawnedService, spawnService } from '../support/processes.js'
import { useStack } from '../support/use-stack.js'

// A rollout stops a dispatcher (SIGTERM, as Kubernetes sends it) while it talks to the relay,
// and a new dispatcher is already running. By default the drain asked for (25 s) is shorter than
// the answer to a final dot may take (600 s); here the same shape, scaled down: 2 s against 15 s.
const PROJECT = 'proj_01KDISPATCHDRAINTEST000000'
const children: SpawnedService[] = []
const { stack, relay, seed } = useStack([], {
  relay: true,
  seed: true,
  before: () => seed.domain(PROJECT, 'mail.drain.test'),
})

const settings = () => ({
  MAIL_TRANSPORT: 'smtp',
  SMTP_URL: relay.url,
  SHUTDOWN_TIMEOUT_SECONDS: '2',
  SMTP_TIMEOUT_SECONDS: '15',
  SMTP_DATA_TIMEOUT_SECONDS: '15',
  DISPATCH_ACK_WAIT_SECONDS: '30',
})
const spawnDispatcher = async () => {
  const s = await spawnService('dispatcher', stack.env(settings()))
  children.push(s)
  return s
}
const exitCode = (s: SpawnedService) =>
  new Promise<number | null>((resolve) =>
    s.proc.exitCode !== null ? resolve(s.proc.exitCode) : s.proc.once('exit', (code) => resolve(code)),
  )
const emailRow = async (id: string) =>
  (
    await seed.sql<{ status: string; attempts: number }>(
      'SELECT status, attempts FROM emails WHERE id = $1',
      [id],
    )
  )[0]!
const delivered = (id: string) =>
  waitFor(async () => (await emailRow(id)).status === 'delivered', {
    timeoutMs: 60_000,
    what: `${id} delivered`,
  })
const newEmail = (to: string) =>
  seed.email(PROJECT, { from: 'hi@mail.drain.test', to: [to], subject: 'Drain', text: 'x' })

afterAll(async () => {
  for (const c of children) await c.kill()
})

describe('a dispatcher stopped mid-send', () => {
  it('waits for the answer to a final dot already sent: the email is recorded delivered and relayed once', async () => {
    const first = await spawnDispatcher()
    // The relay keeps the message on arrival and answers late: a dispatcher gone before the
    // answer leaves it accepted, and a second send would deliver it twice.
    relay.commitFirst = true
    const release = relay.pause()
    try {
      const id = await newEmail('answer@example.com')
      await seed.dispatch(id, PROJECT)
      await waitFor(() => relay.held === 1 || null, { what: 'the message at the relay, unanswered' })
      first.proc.kill('SIGTERM')
      const exited = exitCode(first)
      await stack.start('dispatcher', settings())
      // The relay answers 3 s on (within its 15 s), or as soon as the stopped dispatcher is gone.
      await Promise.race([exited, sleep(3_000)])
      release()
      await delivered(id)
      expect(relay.forEmail(id)).toHaveLength(1)
      expect((await emailRow(id)).attempts).toBe(1)
      expect(await exited).toBe(0)
    } finally {
      release()
      relay.commitFirst = false
    }
  }, 120_000)

  it('gives up a message whose final dot was not sent: nothing is relayed, the claim goes back uncounted, the next dispatcher sends it once', async () => {
    await stack.stop('dispatcher')
    const first = await spawnDispatcher()
    const release = relay.holdRcpt()
    try {
      const id = await newEmail('again@example.com')
      await seed.dispatch(id, PROJECT)
      await waitFor(() => relay.rcptHeld === 1 || null, { what: 'the recipient unanswered' })
      first.proc.kill('SIGTERM')
      const code = await exitCode(first)
      release()
      expect(relay.forEmail(id)).toEqual([])
      // Claimable again at once, its attempt taken back: it was never tried.
      expect(await emailRow(id)).toEqual({ status: 'queued', attempts: 0 })
      await stack.start('dispatcher', settings())
      await delivered(id)
      expect(relay.forEmail(id)).toHaveLength(1)
      expect((await emailRow(id)).attempts).toBe(1)
      expect(code).toBe(0)
    } finally {
      release()
    }
  }, 120_000)
})
