import { waitFor } from '@mailer/testing'
import { beforeAll, expect, it } from 'vitest'
import { TestDnsServer } from '../support/dns-server.js'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'
import { metricValue } from '../support/webhooks.js'

// A broadcast whose sending domain stops being verified while it is under way (its DNS records
// removed, found missing by a re-check) pauses, as a limit pauses it, instead of skipping every
// contact left: each of them would be refused for the same sender. Once the domain is verified
// again the broadcast goes on from where it stopped, and every contact gets one email.
let dns: TestDnsServer
// Started below: the DNS settings name the test DNS server's address.
const { stack, client } = useStack([], {
  env: { BROADCAST_POLL_MS: '50', BROADCAST_RESUME_SECONDS: '1', BROADCAST_LEASE_SECONDS: '2' },
  after: async () => {
    await dns?.stop()
  },
})

beforeAll(async () => {
  dns = await TestDnsServer.start()
  await stack.startAll(['auth', 'email', 'broadcast', 'gateway'], {
    DOMAIN_VERIFICATION: 'dns',
    DNS_SERVERS: dns.address,
  })
})

const total = (b: { counts: Record<string, number> }) => Object.values(b.counts).reduce((a, n) => a + n, 0)
const emailsTotal = (outcome: string) =>
  metricValue(stack.metricsPort('broadcast'), 'mailer_broadcast_emails_total', `outcome="${outcome}"`)

it('pauses while its domain is not verified and sends to every contact once it is again', async () => {
  const p = await createProject(client, 'news', { dailyLimit: 2 })
  const setup = await client.post('/v1/admin/projects/news/domains/news.test/setup', client.admin)
  expect(setup.status).toBe(200)
  const records: Array<{ name: string; value: string }> = setup.body.records
  for (const r of records) dns.set(r.name, [r.value])
  const verify = async (expected: string) => {
    const d = await client.get('/v1/domains?refresh=1', p.live)
    expect(d.body.data[0].verification).toBe(expected)
  }
  await verify('verified')

  const audienceId = (await client.post('/v1/audiences', p.live, { name: 'All' })).body.id
  const contacts = ['a', 'b', 'c', 'd'].map((n) => ({ email: `${n}@example.com` }))
  expect((await client.post(`/v1/contacts/import?audienceId=${audienceId}`, p.live, contacts)).status).toBe(
    200,
  )
  const id = (
    await client.post('/v1/broadcasts', p.live, {
      audienceId,
      from: 'News <hello@news.test>',
      subject: 'Issue 1',
      html: '<p>Hello</p>',
    })
  ).body.id
  expect((await client.post(`/v1/broadcasts/${id}/send`, p.live)).status).toBe(202)
  const get = async () => (await client.get(`/v1/broadcasts/${id}`, p.live)).body
  // The daily limit holds it after two emails, with the domain still verified.
  const limited = await waitFor(async () => ((b) => (b.status === 'paused' ? b : null))(await get()), {
    timeoutMs: 15_000,
    what: 'paused by the daily limit',
  })
  expect(total(limited)).toBe(2)

  // The SPF record goes away and a re-check finds it missing: the domain is no longer verified.
  dns.set('news.test', ['v=spf1 -all'])
  await verify('failed')
  expect((await client.patch('/v1/admin/projects/news', client.admin, { dailyLimit: 100 })).status).toBe(200)

  // The next run tries the contacts left and is refused for the sender.
  const refused = await waitFor(
    async () => {
      // The metric is counted before the run's state is written: read it first, then the state,
      // and take the state once the run has ended (paused, or sent on the old code).
      const tried = (await emailsTotal('sender_refused')) + (await emailsTotal('rejected')) > 0
      const b = await get()
      if (b.status === 'sent') return b
      return tried && b.status !== 'sending' ? b : null
    },
    { timeoutMs: 15_000, what: 'a run with the domain not verified' },
  )
  expect(refused.status).toBe('paused')
  expect(total(refused)).toBe(2)
  expect(await emailsTotal('rejected')).toBe(0)

  // The record is back: the broadcast resumes where it stopped.
  dns.set('news.test', [records[1]!.value])
  await verify('verified')
  const sent = await waitFor(async () => ((b) => (b.status === 'sent' ? b : null))(await get()), {
    timeoutMs: 15_000,
    what: 'sent',
  })
  expect(total(sent)).toBe(4)
  const emails = await client.get(`/v1/emails?tag=broadcast_id:${id}`, p.live)
  expect(emails.body.data.map((e: any) => e.to[0]).sort()).toEqual(contacts.map((c) => c.email))
})
