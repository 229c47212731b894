import { waitFor } from '@mailer/testing'
import { simpleParser } from 'mailparser'
import { connect, type NatsConnection } from 'nats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { analyticsDrained, counts } from '../support/analytics-events.js'
import { projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// Analytics against what the pipeline really records: emails sent through the API, delivered
// (or refused) by a real SMTP relay, opened and clicked through the gateway's public links.
const PUBLIC_URL = 'https://links.mailer.test'
const { te, stack, client, relay } = useStack(['auth', 'email', 'analytics', 'gateway'], {
  env: { PUBLIC_URL, TRACKING_SECRET: 'tracking-secret-for-tests-0123456789' },
  dispatcher: true,
})
// Addresses at dead.example do not exist: the relay refuses them at RCPT TO (a hard bounce).
relay.rcpt = (a) => (a.endsWith('@dead.example') ? { code: 550, message: '5.1.1 No such user' } : 'accept')
// Mail to spam.example is refused as a whole at the end of DATA.
relay.data = (to) =>
  to.some((a) => a.endsWith('@spam.example')) ? { code: 554, message: '5.7.1 Looks like spam' } : 'accept'
let nc: NatsConnection
let acme: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  nc = await connect({ servers: te.natsUrl })
  acme = await projectWithDomain(client, 'acme')
}, 60_000)
afterAll(async () => {
  await nc?.close()
})

const follow = (url: string) => fetch(stack.gatewayUrl + url.slice(PUBLIC_URL.length), { redirect: 'manual' })

async function send(body: Record<string, unknown>, final: string[]) {
  const r = await client.post('/v1/emails', acme.live, { from: acme.from, subject: 'Mix', ...body })
  expect(r.status).toBe(202)
  const id = r.body.id as string
  await waitFor(async () => final.includes((await client.get(`/v1/emails/${id}`, acme.live)).body.status), {
    timeoutMs: 15_000,
    what: `email ${id} in ${final}`,
  })
  return id
}

describe('analytics of real traffic', () => {
  it('counts a known mix of sends, bounces, failures, opens and clicks exactly', async () => {
    // 1. One recipient, delivered, opened twice and clicked twice.
    const tracked = await send(
      {
        to: 'ann@ok.example',
        html: '<p><a href="https://shop.example/">Buy</a></p>',
        tags: { plan: 'pro' },
        trackOpens: true,
        trackClicks: true,
      },
      ['delivered'],
    )
    // 2. Three recipients: two delivered, one bounced.
    await send(
      {
        to: ['bob@ok.example', 'cat@ok.example', 'x@dead.example'],
        html: '<p>Hi</p>',
        tags: { plan: 'pro' },
      },
      ['bounced'],
    )
    // 3. One recipient that bounces: the relay answered for it, so it was sent (and bounced).
    await send({ to: 'y@dead.example', html: '<p>Hi</p>', tags: { plan: 'free' } }, ['bounced'])
    // 4. One email the relay refuses as a whole: failed.
    await send({ to: 'z@spam.example', html: '<p>Hi</p>' }, ['failed'])

    const d = relay.forEmail(tracked)[0]!
    const html = String((await simpleParser(d.raw)).html)
    const pixel = /<img src="([^"]+\/t\/o\/[^"]+)"/.exec(html)![1]!
    const link = /<a href="([^"]+\/t\/c\/[^"]+)"/.exec(html)![1]!
    for (const u of [pixel, pixel, link, link]) expect((await follow(u)).status).toBeLessThan(400)
    await waitFor(
      async () =>
        (await client.get(`/v1/emails/${tracked}`, acme.live)).body.events.filter(
          (e: any) => e.type === 'email.clicked',
        ).length === 2,
      { what: 'two clicks recorded' },
    )
    await analyticsDrained(te, nc)

    const r = await client.get('/v1/analytics?range=7d', acme.live)
    expect(r.status).toBe(200)
    // Sent: 1 + 3 + 1 recipients the relay answered for; the email refused as a whole is failed.
    const totals = counts({ sent: 5, delivered: 3, bounced: 2, failed: 1, opened: 1, clicked: 2 })
    expect(r.body.totals).toEqual(totals)
    expect(r.body.buckets.at(-1)).toEqual({ bucket: r.body.buckets.at(-1).bucket, ...totals })
    expect(r.body.deliveryRate).toBe(0.6)
    expect(r.body.bounceRate).toBe(0.4)
    expect(r.body.complaintRate).toBe(0)
    expect(r.body.p50DeliveryMs).toEqual(expect.any(Number))
    expect(r.body.p95DeliveryMs).toBeGreaterThanOrEqual(r.body.p50DeliveryMs)
    // Tags count per sent recipient, like `sent`: plan:pro on 1 + 3 recipients, plan:free on 1.
    expect(r.body.topTags).toEqual([
      { value: 'plan:pro', count: 4 },
      { value: 'plan:free', count: 1 },
    ])
    expect(r.body.topBouncedDomains).toEqual([{ value: 'dead.example', count: 2 }])
  })
})
