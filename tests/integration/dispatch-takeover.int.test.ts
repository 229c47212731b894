import { waitFor } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { projectWithDomain } from '../support/emails.js'
import { type SpawnedService, spawnService } from '../support/processes.js'
import { useStack } from '../support/use-stack.js'

// A dispatcher killed (SIGKILL: an OOM kill, a lost node) in the middle of a send leaves its email
// `sending`; another replica takes it over once the claim and the stream message are older than
// DISPATCH_ACK_WAIT_SECONDS. With the default settings (nothing set here but the relay) that is
// 30 s: the email is delivered well within 45 s of the kill (it took 2 minutes before).
const TAKEOVER_BOUND_MS = 45_000
const { client, stack, relay } = useStack(['auth', 'email', 'gateway'], { relay: true })
const children: SpawnedService[] = []
let live: string
let from: string

const spawnDispatcher = async () => {
  const s = await spawnService('dispatcher', stack.env({ MAIL_TRANSPORT: 'smtp', SMTP_URL: relay.url }))
  children.push(s)
  return s
}

beforeAll(async () => {
  const p = await projectWithDomain(client, 'takeover', 'mail.takeover.test')
  live = p.live
  from = p.from
})
afterAll(async () => {
  for (const c of children) await c.kill()
})

describe('a dispatcher killed mid-send, default settings', () => {
  it('has its email delivered by another replica within the default ack wait, once', async () => {
    const first = await spawnDispatcher()
    // The relay holds its answer to the final dot; a client gone before the answer has its
    // message discarded (an MTA that had not committed it yet), so one copy arrives in the end.
    const release = relay.pause()
    try {
      const sent = await client.post('/v1/emails', live, {
        from,
        to: 'crash@example.com',
        subject: 'Taken over',
        text: 'x',
      })
      expect(sent.status).toBe(202)
      const id = sent.body.id as string
      await waitFor(() => relay.held === 1 || null, { what: 'the message at the relay, unanswered' })
      const second = await spawnDispatcher()
      await first.kill()

      // The second replica's copy reaches the relay: the email was taken over.
      await waitFor(() => relay.held === 2 || null, {
        timeoutMs: TAKEOVER_BOUND_MS,
        what: 'the email taken over by the second dispatcher',
      })
      release()
      const record = await waitFor(
        async () => {
          const r = await client.get(`/v1/emails/${id}`, live)
          return r.body.status === 'delivered' ? r.body : null
        },
        { timeoutMs: 15_000, what: 'the email delivered' },
      )
      expect(record.attempts).toBe(2)
      expect(relay.forEmail(id)).toHaveLength(1)
      expect(second.proc.exitCode).toBeNull()
    } finally {
      release()
    }
  }, 120_000)
})
