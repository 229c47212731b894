import { waitFor } from '@mailer/testing'
import { simpleParser } from 'mailparser'
import { beforeAll, describe, expect, it } from 'vitest'
import { projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// A broadcast from the API to a real SMTP relay through every service on the path (gateway,
// auth, broadcast, email, dispatcher). Broadcasts get half of a 1,000-per-10-seconds rate, so a
// 1,000-contact broadcast takes a few pacing rounds and the broadcast service can be killed midway.
const { stack, client, relay } = useStack(['auth', 'email', 'broadcast', 'gateway'], {
  env: {
    RATE_LIMIT: '1000',
    RATE_PERIOD: '10',
    BROADCAST_RATE_SHARE: '0.5',
    BROADCAST_POLL_MS: '50',
    BROADCAST_LEASE_SECONDS: '2',
    // Progress and delivered counts are read as the background recount stores them: soon here.
    BROADCAST_COUNTS_REFRESH_MS: '50',
  },
  dispatcher: { SMTP_POOL_SIZE: '20' },
})
let acme: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme', 'news.acme.test', { dailyLimit: 0 })
})

const broadcast = async (audienceId: string, subject = 'Hello {{first_name}}') => {
  const b = await client.post('/v1/broadcasts', acme.live, {
    audienceId,
    from: acme.from,
    subject,
    html: '<p>Hi {{first_name}}, your code is {{code}}.</p><p><a href="{{unsubscribe_url}}">Unsubscribe</a></p>',
  })
  expect(b.status).toBe(201)
  const s = await client.post(`/v1/broadcasts/${b.body.id}/send`, acme.live)
  expect(s.status).toBe(202)
  return b.body.id as string
}

const waitSent = (id: string, timeoutMs = 60_000) =>
  waitFor(
    async () => {
      const r = await client.get(`/v1/broadcasts/${id}`, acme.live)
      return r.body.status === 'sent' ? r.body : null
    },
    { timeoutMs, what: `broadcast ${id} sent` },
  )

/** The broadcast's emails as the email service lists them (it answers while the broadcast service is down). */
async function countEmails(broadcastId: string): Promise<number> {
  let n = 0
  let cursor: string | null = null
  do {
    const r: any = await client.get(
      `/v1/emails?tag=broadcast_id:${broadcastId}&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
      acme.live,
    )
    n += r.body.data.length
    cursor = r.body.nextCursor
  } while (cursor)
  return n
}

/** A header exactly as it is in the message (mailparser folds List-* headers into one object). */
const headerOf = (mail: { headerLines: ReadonlyArray<{ key: string; line: string }> }, name: string) =>
  mail.headerLines
    .find((h) => h.key === name)
    ?.line.slice(name.length + 1)
    .trim()

const deliveredTo = (subjectPrefix: string) =>
  relay.delivered
    .filter((d) => d.raw.toString('utf8').includes(`Subject: ${subjectPrefix}`))
    .flatMap((d) => d.envelopeTo)

describe('a broadcast to 1,000 contacts', () => {
  it('delivers exactly once to each subscribed, non-suppressed contact, across a restart of the broadcast service', async () => {
    const audienceId = (await client.post('/v1/audiences', acme.live, { name: 'Big' })).body.id
    const contacts = Array.from({ length: 1000 }, (_, i) => ({
      email: `reader${String(i).padStart(4, '0')}@example.com`,
      firstName: `Reader${i}`,
      data: { code: `C${i}` },
      // Every 40th contact has unsubscribed.
      ...(i % 40 === 0 ? { unsubscribed: true } : {}),
    }))
    const imported = await client.post(`/v1/contacts/import?audienceId=${audienceId}`, acme.live, contacts)
    expect(imported.body).toEqual({ created: 1000, updated: 0 })
    // Every 50th contact (not already unsubscribed) is on the suppression list.
    const suppressed = contacts.filter((_, i) => i % 50 === 25).map((c) => c.email)
    for (const address of suppressed) {
      expect((await client.post('/v1/admin/suppressions', client.admin, { address })).status).toBe(201)
    }
    const expected = new Set(
      contacts.filter((c) => !c.unsubscribed && !suppressed.includes(c.email)).map((c) => c.email),
    )
    expect(expected.size).toBe(955)

    const id = await broadcast(audienceId, 'Big news for {{first_name}}')
    // Kill the broadcast service in the middle of the walk: no draining, its lease just lapses.
    await waitFor(
      async () => {
        const r = await client.get(`/v1/broadcasts/${id}`, acme.live)
        const n = Object.values(r.body.counts as Record<string, number>).reduce((a, b) => a + b, 0)
        return n >= 100 ? r.body : null
      },
      { timeoutMs: 20_000, intervalMs: 25, what: 'the first chunks' },
    )
    await stack.kill('broadcast')
    const midway = await countEmails(id)
    expect(midway).toBeGreaterThanOrEqual(100)
    expect(midway).toBeLessThan(955)
    await stack.start('broadcast')

    const done = await waitSent(id)
    expect(Object.values(done.counts as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(955)
    await waitFor(() => deliveredTo('Big news').length >= 955, { timeoutMs: 60_000, what: '955 deliveries' })

    const got = deliveredTo('Big news')
    expect(got).toHaveLength(955)
    expect(new Set(got)).toEqual(expected)
    // The delivered email is personalized and carries the one-click unsubscribe headers.
    const raw = relay.delivered.find((d) => d.envelopeTo[0] === 'reader0001@example.com')!.raw
    const mail = await simpleParser(raw)
    expect(mail.subject).toBe('Big news for Reader1')
    expect(mail.html).toContain('your code is C1.')
    expect(headerOf(mail, 'list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click')
    const unsubscribe = headerOf(mail, 'list-unsubscribe')
    expect(unsubscribe).toMatch(/^<http:\/\/localhost:3000\/u\/[\w-]+\.[\w-]+>$/)
    expect(mail.html).toContain(unsubscribe!.slice(1, -1))

    const final = await waitFor(
      async () => {
        const r = await client.get(`/v1/broadcasts/${id}`, acme.live)
        return r.body.counts.delivered === 955 ? r.body : null
      },
      { timeoutMs: 20_000, what: 'delivered counts' },
    )
    expect(final.counts).toEqual({ delivered: 955 })
  }, 150_000)
})

describe('one-click unsubscribe', () => {
  it('a POST to the List-Unsubscribe URL marks the contact, and a later broadcast skips it', async () => {
    const audienceId = (await client.post('/v1/audiences', acme.live, { name: 'Small' })).body.id
    await client.post(`/v1/contacts/import?audienceId=${audienceId}`, acme.live, [
      { email: 'stay@example.com', firstName: 'Stay', data: { code: 'S' } },
      { email: 'leave@example.com', firstName: 'Leave', data: { code: 'L' } },
    ])
    const first = await broadcast(audienceId, 'First issue {{first_name}}')
    await waitSent(first)
    await waitFor(() => deliveredTo('First issue').length === 2, { what: 'first issue delivered' })

    const raw = relay.delivered.find(
      (d) => d.envelopeTo[0] === 'leave@example.com' && d.raw.toString().includes('First issue'),
    )!.raw
    const header = headerOf(await simpleParser(raw), 'list-unsubscribe')!
    const path = new URL(header.slice(1, -1)).pathname
    expect(path).toMatch(/^\/u\/[\w-]+\.[\w-]+$/)

    // What a mail client does for RFC 8058 one-click unsubscribe.
    const res = await fetch(stack.gatewayUrl + path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    })
    expect(res.status).toBe(200)
    const leaver = (await client.get('/v1/contacts?q=leave@example.com', acme.live)).body.data[0]
    expect(leaver.unsubscribed).toBe(true)

    const second = await broadcast(audienceId, 'Second issue {{first_name}}')
    const counts = (await waitSent(second)).counts as Record<string, number>
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(1)
    await waitFor(() => deliveredTo('Second issue').length === 1, { what: 'second issue delivered' })
    expect(deliveredTo('Second issue')).toEqual(['stay@example.com'])
  }, 60_000)
})
