import { Links } from '@mailer/links'
import { waitFor } from '@mailer/testing'
import { simpleParser } from 'mailparser'
import { beforeAll, describe, expect, it } from 'vitest'
import { projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// Unsubscribe links point at PUBLIC_URL; the test follows them at the gateway's real address.
const PUBLIC_URL = 'https://links.mailer.test'
const SECRET = 'unsubscribe-secret-for-tests-0123456789'
const { stack, client, relay } = useStack(['auth', 'email', 'broadcast', 'gateway'], {
  env: { PUBLIC_URL, TRACKING_SECRET: SECRET },
  overrides: { BROADCAST_POLL_MS: '50' },
  dispatcher: true,
})
let acme: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
})

const at = (url: string) => {
  expect(url.startsWith(`${PUBLIC_URL}/u/`)).toBe(true)
  return stack.gatewayUrl + url.slice(PUBLIC_URL.length)
}
const contact = async (email: string) => {
  const r = await client.post('/v1/contacts', acme.live, { email, firstName: 'Ann' })
  expect(r.status).toBe(201)
  return r.body.id as string
}
const isUnsubscribed = async (id: string) =>
  (await client.get(`/v1/contacts/${id}`, acme.live)).body.unsubscribed
/** What an RFC 8058 mail client sends. */
const oneClick = (url: string, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: 'List-Unsubscribe=One-Click',
  })

describe('unsubscribe links', () => {
  it('GET only asks; the one-click POST marks the contact, and repeating it is harmless', async () => {
    const id = await contact('ann@example.com')
    const url = at(new Links({ publicUrl: PUBLIC_URL, secret: SECRET }).unsubscribeUrl(acme.project.id, id))

    const page = await fetch(url)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/html')
    expect(page.headers.get('cache-control')).toBe('no-store')
    expect(await page.text()).toContain('<form method="post">')
    expect(await isUnsubscribed(id)).toBe(false)

    const done = await oneClick(url)
    expect(done.status).toBe(200)
    expect(await done.text()).toContain('You are unsubscribed')
    expect(await isUnsubscribed(id)).toBe(true)

    const json = await oneClick(url, { accept: 'application/json' })
    expect(json.status).toBe(200)
    expect(await json.json()).toEqual({ unsubscribed: true })
    expect(await isUnsubscribed(id)).toBe(true)
  })

  it('unsubscribes through the List-Unsubscribe link of a real broadcast email', async () => {
    const id = await contact('bob@example.com')
    const audience = await client.post('/v1/audiences', acme.live, { name: 'news' })
    await client.post(`/v1/audiences/${audience.body.id}/contacts`, acme.live, { contactIds: [id] })
    const bc = await client.post('/v1/broadcasts', acme.live, {
      audienceId: audience.body.id,
      from: acme.from,
      subject: 'News for {{first_name}}',
      html: '<p>Hi</p><a href="{{unsubscribe_url}}">Unsubscribe</a>',
    })
    expect(bc.status).toBe(201)
    expect((await client.post(`/v1/broadcasts/${bc.body.id}/send`, acme.live, {})).status).toBeLessThan(300)

    const d = await waitFor(() => relay.delivered.find((m) => m.envelopeTo.includes('bob@example.com')), {
      timeoutMs: 20_000,
      what: 'the broadcast email',
    })
    const mail = await simpleParser(d.raw)
    const head = d.raw
      .toString('latin1')
      .split('\r\n\r\n')[0]!
      .replace(/\r\n[ \t]+/g, ' ')
    expect(head).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/im)
    const listUnsubscribe = head.match(/^List-Unsubscribe: <([^>]+)>/im)?.[1]
    expect(listUnsubscribe, head).toBeDefined()
    expect(mail.html).toContain(`href="${listUnsubscribe}"`)

    expect((await oneClick(at(listUnsubscribe!))).status).toBe(200)
    expect(await isUnsubscribed(id)).toBe(true)
  })

  it('answers a bad token with a 404 page and unknown methods with 405', async () => {
    const id = await contact('carl@example.com')
    const good = new Links({ publicUrl: PUBLIC_URL, secret: SECRET }).unsubscribeUrl(acme.project.id, id)
    const forged = new Links({ publicUrl: PUBLIC_URL, secret: 'another-secret-0123456789' }).unsubscribeUrl(
      acme.project.id,
      id,
    )
    for (const url of [
      `${stack.gatewayUrl}/u/x`,
      `${stack.gatewayUrl}/u/`,
      `${stack.gatewayUrl}/u/${'a'.repeat(5000)}.b`,
      at(forged),
    ]) {
      for (const r of [await fetch(url), await oneClick(url)]) {
        expect(r.status).toBe(404)
        expect(await r.text()).toContain('Link not found')
      }
    }
    expect((await fetch(at(good), { method: 'DELETE' })).status).toBe(405)
    expect(await isUnsubscribed(id)).toBe(false)
  })

  it('answers 503 when the broadcast service does not, without marking anything', async () => {
    const id = await contact('dora@example.com')
    const url = at(new Links({ publicUrl: PUBLIC_URL, secret: SECRET }).unsubscribeUrl(acme.project.id, id))
    await stack.stop('broadcast')
    try {
      const page = await oneClick(url)
      expect(page.status).toBe(503)
      expect(await page.text()).toContain('try again')
      const json = await oneClick(url, { accept: 'application/json' })
      expect(json.status).toBe(503)
      expect(((await json.json()) as { error: unknown }).error).toMatchObject({ code: 'service_unavailable' })
    } finally {
      await stack.start('broadcast', { BROADCAST_POLL_MS: '50' })
    }
    expect(await isUnsubscribed(id)).toBe(false)
    expect((await oneClick(url)).status).toBe(200)
    expect(await isUnsubscribed(id)).toBe(true)
  })
})
