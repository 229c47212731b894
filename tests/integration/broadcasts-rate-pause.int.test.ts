import { waitFor } from '@mailer/testing'
import { describe, expect, it } from 'vitest'
import { sendBroadcast } from '../support/broadcasts.js'
import { sql } from '../support/db.js'
import { email, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// interface.md part 3: a broadcast that hits a rate limit pauses and continues at the next run,
// five minutes later (BROADCAST_RESUME_SECONDS at its default), from the contact where it stopped.
// A rate limit of 8 per minute: the rolling estimate frees room only 7.5 s into the next window,
// so the limit reached here still holds when the broadcast asks for its allowance a moment later.
const { te, client } = useStack(['auth', 'email', 'broadcast', 'gateway'], {
  env: { RATE_LIMIT: '8', RATE_PERIOD: '60', BROADCAST_RATE_SHARE: '0.5', BROADCAST_POLL_MS: '50' },
})

const broadcastOf = async (key: string, id: string) => (await client.get(`/v1/broadcasts/${id}`, key)).body

describe('rate limit', () => {
  it('pauses a broadcast for five minutes when transactional sends used the whole rate, and it resumes where it stopped, sent as soon as the audience ends', async () => {
    const p = await projectWithDomain(client, 'busy', 'busy.test', { dailyLimit: 0 })
    const audienceId = (await client.post('/v1/audiences', p.live, { name: 'All' })).body.id
    const contacts = ['a', 'b', 'c', 'd'].map((n) => ({ email: `${n}@example.com` }))
    await client.post(`/v1/contacts/import?audienceId=${audienceId}`, p.live, contacts)

    for (let i = 0; i < 8; i++)
      expect(
        (await client.post('/v1/emails', p.live, email(p.from, { to: `r${i}@example.com` }))).status,
      ).toBe(202)
    const refused = await client.post('/v1/emails', p.live, email(p.from))
    expect(refused.status).toBe(429)
    expect(refused.body.error.code).toBe('rate_limited')

    const before = Date.now()
    const id = await sendBroadcast(client, p, audienceId)
    const paused = await waitFor(
      async () => {
        const b = await broadcastOf(p.live, id)
        return b.status === 'paused' ? b : null
      },
      { timeoutMs: 15_000, intervalMs: 50, what: 'paused' },
    )
    expect(paused.counts).toEqual({})
    const resumeIn = Date.parse(paused.resumeAt) - before
    expect(resumeIn).toBeGreaterThanOrEqual(295_000)
    expect(resumeIn).toBeLessThanOrEqual(320_000)

    // Five minutes on, the window has moved: the counters are cleared and the run made due. The
    // broadcast's share (4 of 8) takes the whole audience, and it is sent at once, not after
    // waiting for more room to find that no contact is left.
    await sql(te, 'DELETE FROM send_counters WHERE project_id = $1', [p.project.id])
    await sql(te, 'UPDATE broadcasts SET resume_at = now() WHERE id = $1', [id])
    const sent = await waitFor(
      async () => {
        const b = await broadcastOf(p.live, id)
        return b.status === 'sent' ? b : null
      },
      { timeoutMs: 15_000, what: 'sent' },
    )
    expect(sent.counts).toEqual({ queued: 4 })
    const emails = await client.get(`/v1/emails?tag=broadcast_id:${id}`, p.live)
    expect(emails.body.data.map((e: any) => e.to[0]).sort()).toEqual([
      'a@example.com',
      'b@example.com',
      'c@example.com',
      'd@example.com',
    ])
  }, 60_000)
})
