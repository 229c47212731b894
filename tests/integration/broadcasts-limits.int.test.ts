import { waitFor } from '@mailer/testing'
import { describe, expect, it } from 'vitest'
import { sendBroadcast } from '../support/broadcasts.js'
import { email, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// Broadcasts against the send limits: a daily limit pauses them until the next run, and the
// per-period rate is shared so that transactional sends always find room.
const { client } = useStack(['auth', 'email', 'broadcast', 'gateway'], {
  env: {
    RATE_LIMIT: '20',
    RATE_PERIOD: '10',
    BROADCAST_RATE_SHARE: '0.5',
    BROADCAST_POLL_MS: '50',
    BROADCAST_RESUME_SECONDS: '1',
    BROADCAST_LEASE_SECONDS: '2',
    // Progress while sending is read as the background recount stores it: soon here.
    BROADCAST_COUNTS_REFRESH_MS: '100',
  },
})

async function audienceOf(key: string, n: number, prefix: string): Promise<string> {
  const id = (await client.post('/v1/audiences', key, { name: prefix })).body.id
  const contacts = Array.from({ length: n }, (_, i) => ({
    email: `${prefix}${i}@example.com`,
    firstName: `N${i}`,
  }))
  await client.post(`/v1/contacts/import?audienceId=${id}`, key, contacts)
  return id
}

const broadcastOf = async (key: string, id: string) => (await client.get(`/v1/broadcasts/${id}`, key)).body
const total = (b: { counts: Record<string, number> }) => Object.values(b.counts).reduce((a, n) => a + n, 0)

describe('daily limit', () => {
  it('pauses the broadcast, keeps it paused at each run while the limit holds, and resumes where it stopped', async () => {
    const p = await projectWithDomain(client, 'daily', 'daily.test', { dailyLimit: 4 })
    const audienceId = await audienceOf(p.live, 9, 'daily')
    const id = await sendBroadcast(client, p, audienceId)

    const paused = await waitFor(
      async () => {
        const b = await broadcastOf(p.live, id)
        return b.status === 'paused' ? b : null
      },
      { timeoutMs: 15_000, what: 'paused' },
    )
    expect(total(paused)).toBe(4)
    expect(paused.resumeAt).not.toBeNull()
    // A transactional send hits the same daily limit.
    const tx = await client.post('/v1/emails', p.live, email(p.from))
    expect(tx.status).toBe(429)
    expect(tx.body.error.code).toBe('daily_limit_exceeded')

    // The next runs (one second apart here, five minutes by default) find the limit still reached.
    await waitFor(
      async () => {
        const b = await broadcastOf(p.live, id)
        return b.status === 'paused' && b.resumeAt !== paused.resumeAt ? b : null
      },
      { timeoutMs: 10_000, what: 'a later run that paused again' },
    )
    expect(total(await broadcastOf(p.live, id))).toBe(4)

    // The operator raises the limit: the next run continues from the next contact.
    expect((await client.patch('/v1/admin/projects/daily', client.admin, { dailyLimit: 100 })).status).toBe(
      200,
    )
    const sent = await waitFor(
      async () => {
        const b = await broadcastOf(p.live, id)
        return b.status === 'sent' ? b : null
      },
      { timeoutMs: 15_000, what: 'sent' },
    )
    expect(sent.counts).toEqual({ queued: 9 })
    const emails = await client.get(`/v1/emails?tag=broadcast_id:${id}`, p.live)
    const to = emails.body.data.map((e: any) => e.to[0]).sort()
    expect(to).toEqual(Array.from({ length: 9 }, (_, i) => `daily${i}@example.com`).sort())
  }, 60_000)
})

describe('fairness', () => {
  it('a broadcast uses only its share of the rate: transactional sends still go out while it runs', async () => {
    const p = await projectWithDomain(client, 'fair', 'fair.test', { dailyLimit: 0 })
    const audienceId = await audienceOf(p.live, 20, 'fair')
    const id = await sendBroadcast(client, p, audienceId)

    // The broadcast takes its half (10 of 20 per 10 s) and then has to wait for the window.
    await waitFor(async () => total(await broadcastOf(p.live, id)) >= 10, { what: 'the first share' })
    const during = await broadcastOf(p.live, id)
    expect(during.status).toBe('sending')
    expect(total(during)).toBeLessThan(20)

    // Password resets keep flowing: the other half of the rate is theirs.
    for (let i = 0; i < 8; i++) {
      const r = await client.post('/v1/emails', p.live, email(p.from, { to: `reset${i}@example.com` }))
      expect(r.status, JSON.stringify(r.body)).toBe(202)
    }

    // Paced by the allowance, the broadcast finishes on its own as the window moves on.
    const sent = await waitFor(
      async () => {
        const b = await broadcastOf(p.live, id)
        return b.status === 'sent' ? b : null
      },
      { timeoutMs: 60_000, intervalMs: 100, what: 'sent' },
    )
    expect(sent.counts).toEqual({ queued: 20 })
  }, 90_000)
})

describe('competing broadcasts', () => {
  it('two broadcasts of one project share the allowance; each contact still gets exactly one email of each', async () => {
    const p = await projectWithDomain(client, 'twins', 'twins.test', { dailyLimit: 0 })
    const audienceId = await audienceOf(p.live, 8, 'twins')
    // Both are claimed together and race for the same broadcast share; whichever gets items
    // refused with rate_limited pauses and retries them later.
    const ids = await Promise.all([
      sendBroadcast(client, p, audienceId),
      sendBroadcast(client, p, audienceId),
    ])
    for (const id of ids) {
      const sent = await waitFor(
        async () => {
          const b = await broadcastOf(p.live, id)
          return b.status === 'sent' ? b : null
        },
        { timeoutMs: 45_000, what: `broadcast ${id} sent` },
      )
      expect(sent.counts).toEqual({ queued: 8 })
      const emails = await client.get(`/v1/emails?tag=broadcast_id:${id}`, p.live)
      expect(new Set(emails.body.data.map((e: any) => e.to[0])).size).toBe(8)
    }
  }, 60_000)
})
