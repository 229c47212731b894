import { waitFor } from '@mailer/testing'
import { simpleParser } from 'mailparser'
import { beforeAll, describe, expect, it } from 'vitest'
import { TRACKING_PUBLIC_URL, trackingProject, useTrackingStack } from '../support/tracking-stack.js'
import { metricValue, verifyWebhook } from '../support/webhooks.js'

// Links in emails point at PUBLIC_URL; the test follows them at the gateway's real address.
const PUBLIC_URL = TRACKING_PUBLIC_URL
const { stack, client, relay, receiver } = useTrackingStack()
let acme: Awaited<ReturnType<typeof trackingProject>>['acme']
let secret: string

beforeAll(async () => {
  ;({ acme, secret } = await trackingProject(client, receiver))
})

/** A public link from a delivered email, fetched at the gateway (redirects not followed). */
const follow = (url: string, init: RequestInit = {}) => {
  expect(url.startsWith(`${PUBLIC_URL}/`)).toBe(true)
  return fetch(stack.gatewayUrl + url.slice(PUBLIC_URL.length), { redirect: 'manual', ...init })
}

async function sendAndReceive(body: Record<string, unknown>) {
  const sent = await client.post('/v1/emails', acme.live, { from: acme.from, subject: 'Tracked', ...body })
  expect(sent.status).toBe(202)
  const d = await waitFor(() => relay.forEmail(sent.body.id)[0], { timeoutMs: 15_000, what: 'delivery' })
  const mail = await simpleParser(d.raw)
  return {
    id: sent.body.id as string,
    html: typeof mail.html === 'string' ? mail.html : '',
    text: mail.text ?? '',
  }
}

/** Open hits the email service has taken from the TRACKING stream (recorded or not). */
async function handledOpens(): Promise<number> {
  const port = stack.metricsPort('email')
  const name = 'mailer_email_tracking_hits_total'
  return (
    (await metricValue(port, name, 'kind="open",outcome="recorded"')) +
    (await metricValue(port, name, 'kind="open",outcome="unchanged"'))
  )
}

const hooksFor = (emailId: string, type: string) =>
  receiver.requests.filter((r) => r.body?.type === type && r.body?.data?.emailId === emailId)

describe('open tracking', () => {
  it('serves a no-store pixel and records the first open only, with a webhook', async () => {
    const { id, html } = await sendAndReceive({ to: 'ann@example.com', html: '<p>Hi</p>', trackOpens: true })
    const pixel = /<img src="([^"]+\/t\/o\/[^"]+)"/.exec(html)?.[1]
    expect(pixel).toBeDefined()
    expect(html).toContain('<p>Hi</p>')

    const first = await follow(pixel!, { headers: { 'user-agent': 'MailApp/1.0' } })
    expect(first.status).toBe(200)
    expect(first.headers.get('content-type')).toBe('image/gif')
    expect(first.headers.get('cache-control')).toContain('no-store')
    const gif = Buffer.from(await first.arrayBuffer())
    expect(gif.subarray(0, 6).toString('latin1')).toBe('GIF89a')

    const hook = await waitFor(() => hooksFor(id, 'email.opened')[0], {
      timeoutMs: 15_000,
      what: 'opened webhook',
    })
    expect(verifyWebhook(hook.headers['service-signature'] as string, secret, hook.raw)).toBe(true)
    expect(hook.body.data).toMatchObject({
      emailId: id,
      recipient: 'ann@example.com',
      userAgent: 'MailApp/1.0',
    })

    await follow(pixel!, { headers: { 'user-agent': 'Other/2.0' } })
    await follow(pixel!, { method: 'HEAD' })
    const record = (await client.get(`/v1/emails/${id}`, acme.live)).body
    expect(record.openedAt).toEqual(expect.any(String))
    expect(
      await metricValue(
        stack.metricsPort('gateway'),
        'mailer_gateway_tracking_hits_total',
        'kind="open",outcome="ok"',
      ),
    ).toBe(3)
    // The email service has handled both GETs (a HEAD is not an open) before we look.
    await waitFor(async () => (await handledOpens()) === 2, { timeoutMs: 15_000, what: 'two opens handled' })
    const again = (await client.get(`/v1/emails/${id}`, acme.live)).body
    expect(again.events.filter((e: any) => e.type === 'email.opened')).toHaveLength(1)
    expect(again.openedAt).toBe(record.openedAt)
  })
})

describe('click tracking', () => {
  it('redirects to the original URL, records every click and fires webhooks', async () => {
    const target = 'https://shop.example/item?a=1&b=2'
    const { id, html, text } = await sendAndReceive({
      to: ['ann@example.com', 'bob@example.com'],
      html: `<p><a href="${target.replace('&', '&amp;')}">Buy</a> <a href="mailto:help@acme.test">Help</a></p>`,
      text: `Buy: ${target}`,
      trackClicks: true,
    })
    expect(html).not.toContain('shop.example')
    expect(html).toContain('href="mailto:help@acme.test"')
    expect(html).not.toContain('/t/o/')
    expect(text).toContain(target)
    const link = /<a href="([^"]+\/t\/c\/[^"]+)"/.exec(html)?.[1]
    expect(link).toBeDefined()

    const first = await follow(link!, { headers: { 'user-agent': 'Browser/1' } })
    expect(first.status).toBe(302)
    expect(first.headers.get('location')).toBe(target)
    expect(first.headers.get('cache-control')).toBe('no-store')
    const second = await follow(link!, { headers: { 'user-agent': 'Browser/2' } })
    expect(second.headers.get('location')).toBe(target)

    const hooks = await waitFor(
      () => (hooksFor(id, 'email.clicked').length >= 2 ? hooksFor(id, 'email.clicked') : null),
      {
        timeoutMs: 15_000,
        what: 'two clicked webhooks',
      },
    )
    expect(hooks.map((h) => h.body.data.userAgent).sort()).toEqual(['Browser/1', 'Browser/2'])
    // Two recipients got the same message: the click cannot say which one.
    expect(hooks[0]!.body.data).toMatchObject({ emailId: id, url: target, recipient: null })
    const record = (await client.get(`/v1/emails/${id}`, acme.live)).body
    expect(record.firstClickedAt).toEqual(expect.any(String))
    expect(record.events.filter((e: any) => e.type === 'email.clicked')).toHaveLength(2)
    const events = await client.get(`/v1/events?type=email.clicked&emailId=${id}`, acme.live)
    expect(events.body.data).toHaveLength(2)
  })

  it('cannot be pointed anywhere else: a changed token is a 404 page', async () => {
    const { html } = await sendAndReceive({
      to: 'ann@example.com',
      html: '<a href="https://good.example/">x</a>',
      trackClicks: true,
    })
    const link = /<a href="([^"]+\/t\/c\/[^"]+)"/.exec(html)![1]!
    const token = link.slice(link.lastIndexOf('/') + 1)
    const [payload, sig] = token.split('.')
    const decoded = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8'))
    decoded[2] = 'https://evil.example/'
    const forged = `${Buffer.from(JSON.stringify(decoded)).toString('base64url')}.${sig}`
    for (const path of [
      `/t/c/${forged}`,
      '/t/c/nonsense',
      `/t/o/${token}`,
      `/u/${token}`,
      '/t/c/a.b.c',
      // Cut short to nothing: still the page, not the API's JSON 404.
      '/t/c/',
      '/t/o/',
      '/u/',
    ]) {
      const r = await fetch(stack.gatewayUrl + path, { redirect: 'manual' })
      expect(r.status, path).toBe(404)
      expect(r.headers.get('content-type')).toContain('text/html')
      expect(await r.text()).toContain('Link not found')
    }
    expect((await fetch(`${stack.gatewayUrl}/t/c/${token}`, { method: 'PUT' })).status).toBe(405)
  })
})

describe('click tracking of escaped links', () => {
  it('redirects to the URL a mail client would open, whatever the character references', async () => {
    // Handlebars escapes `=` as `&#x3D;` in {{url}}: a template link is the usual way to get one.
    const made = await client.post('/v1/templates', acme.live, {
      name: 'tracked-link',
      subject: 'Your link',
      html: '<p><a href="{{url}}">Open</a></p>',
    })
    expect(made.status).toBe(201)
    const target = 'https://shop.example/item?a=1&b=2'
    const sent = await client.post('/v1/emails', acme.live, {
      from: acme.from,
      to: 'ann@example.com',
      template: 'tracked-link',
      data: { url: target },
      trackClicks: true,
    })
    expect(sent.status).toBe(202)
    const d = await waitFor(() => relay.forEmail(sent.body.id)[0], { timeoutMs: 15_000, what: 'delivery' })
    const html = String((await simpleParser(d.raw)).html)
    const link = /<a href="([^"]+\/t\/c\/[^"]+)"/.exec(html)![1]!
    expect((await follow(link)).headers.get('location')).toBe(target)

    // Numeric references (decimal or hex, with or without `;`) and named ones, as HTML reads them.
    const { html: html2 } = await sendAndReceive({
      to: 'ann@example.com',
      html: '<a href="https://shop.example/p?q&#61;1&#x26;r&equals;2&amp;s=3">x</a>',
      trackClicks: true,
    })
    const link2 = /<a href="([^"]+\/t\/c\/[^"]+)"/.exec(html2)![1]!
    expect((await follow(link2)).headers.get('location')).toBe('https://shop.example/p?q=1&r=2&s=3')

    // A name of Object.prototype is an unknown reference like any other: kept, the link tracked.
    const { html: html3 } = await sendAndReceive({
      to: 'ann@example.com',
      html: '<a href="https://shop.example/p?a=1&toString;&constructor;">x</a>',
      trackClicks: true,
    })
    const link3 = /<a href="([^"]+\/t\/c\/[^"]+)"/.exec(html3)?.[1]
    expect(link3, html3).toBeDefined()
    expect((await follow(link3!)).headers.get('location')).toBe(
      'https://shop.example/p?a=1&toString;&constructor;',
    )
  })
})

describe('click tracking of long links', () => {
  it('never turns a working link into a "Link not found" page', async () => {
    // 1,500 characters, but 3,000 bytes of UTF-8: wrapped, its token would be too long to verify.
    const long = `https://shop.example/${'ü'.repeat(1500)}`
    const short = 'https://shop.example/short'
    const { html } = await sendAndReceive({
      to: 'ann@example.com',
      html: `<a href="${long}">long</a> <a href="${short}">short</a>`,
      trackClicks: true,
    })
    const hrefs = [...html.matchAll(/<a href="([^"]+)"/g)].map((m) => m[1]!)
    expect(hrefs).toHaveLength(2)
    for (const href of hrefs) {
      if (!href.startsWith(`${PUBLIC_URL}/t/c/`)) {
        expect(href).toBe(long)
        continue
      }
      const r = await follow(href)
      expect(r.status, href.slice(0, 80)).toBe(302)
    }
    expect(hrefs[1]!.startsWith(`${PUBLIC_URL}/t/c/`)).toBe(true)
  })
})

describe('without tracking', () => {
  it('delivers the html untouched', async () => {
    const html = '<p><a href="https://plain.example/">plain</a></p>'
    const got = await sendAndReceive({ to: 'ann@example.com', html })
    expect(got.html).toContain('href="https://plain.example/"')
    expect(got.html).not.toContain(PUBLIC_URL)
  })
})
