import { Links } from '@mailer/links'
import { beforeAll, describe, expect, it } from 'vitest'
import { projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// An unsubscribe must outlive the contact it was made on: operators sync a CRM by deleting and
// importing their list again, and a reader clicks a link of an older email whenever they like.
// Before contact tombstones, a click on the link of a deleted contact answered "You are
// unsubscribed" and changed nothing, and an address that had unsubscribed was mailed again once
// it was imported anew.
const PUBLIC_URL = 'https://links.mailer.test'
const SECRET = 'unsubscribe-secret-for-tests-0123456789'
const { stack, client } = useStack(['auth', 'email', 'broadcast', 'gateway'], {
  env: { PUBLIC_URL, TRACKING_SECRET: SECRET },
})
const links = new Links({ publicUrl: PUBLIC_URL, secret: SECRET })
let acme: Awaited<ReturnType<typeof projectWithDomain>>
let other: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
  other = await projectWithDomain(client, 'other')
})

type Project = typeof acme
const create = async (p: Project, body: Record<string, unknown>) => {
  const r = await client.post('/v1/contacts', p.live, body)
  expect(r.status).toBe(201)
  return r.body as { id: string; unsubscribed: boolean }
}
const remove = async (p: Project, id: string) =>
  expect((await client.del(`/v1/contacts/${id}`, p.live)).status).toBe(200)
const isUnsubscribed = async (p: Project, id: string) =>
  (await client.get(`/v1/contacts/${id}`, p.live)).body.unsubscribed as boolean
/** What an RFC 8058 mail client sends, at the gateway's real address. */
const oneClick = async (p: Project, contactId: string) => {
  const url = links.unsubscribeUrl(p.project.id, contactId)
  const r = await fetch(stack.gatewayUrl + url.slice(PUBLIC_URL.length), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: 'List-Unsubscribe=One-Click',
  })
  expect(r.status).toBe(200)
  expect(await r.json()).toEqual({ unsubscribed: true })
}

describe('unsubscribing a contact that was deleted', () => {
  it('a link of the deleted contact unsubscribes the contact now holding its address', async () => {
    const first = await create(acme, { email: 'ann@example.com' })
    await remove(acme, first.id)
    const again = await create(acme, { email: 'ann@example.com' })
    expect(again.id).not.toBe(first.id)
    expect(again.unsubscribed).toBe(false)

    await oneClick(acme, first.id)
    expect(await isUnsubscribed(acme, again.id)).toBe(true)
  })

  it('a link clicked while the address has no contact holds when the address comes back', async () => {
    const first = await create(acme, { email: 'carl@example.com' })
    await remove(acme, first.id)
    await oneClick(acme, first.id)

    const again = await create(acme, { email: 'carl@example.com', firstName: 'Carl' })
    expect(again.unsubscribed).toBe(true)
  })

  it('the link of an older contact of an address deleted twice still holds when it comes back', async () => {
    const first = await create(acme, { email: 'ivy@example.com' })
    await remove(acme, first.id)
    const second = await create(acme, { email: 'ivy@example.com' })
    await remove(acme, second.id)
    // The first one's link, clicked while the address has no contact; the newest tombstone is the second's.
    await oneClick(acme, first.id)
    expect((await create(acme, { email: 'ivy@example.com' })).unsubscribed).toBe(true)
  })

  it('an address that unsubscribed stays unsubscribed when deleted and imported again', async () => {
    const first = await create(acme, { email: 'bob@example.com' })
    const kept = await create(acme, { email: 'dora@example.com' })
    await oneClick(acme, first.id)
    await remove(acme, first.id)
    await remove(acme, kept.id)

    const imported = await client.post('/v1/contacts/import', acme.live, [
      { email: 'bob@example.com' },
      { email: 'dora@example.com' },
      { email: 'eve@example.com' },
    ])
    expect(imported.body).toEqual({ created: 3, updated: 0 })
    const byEmail = new Map<string, boolean>()
    for (const c of (await client.get('/v1/contacts?limit=100', acme.live)).body.data)
      byEmail.set(c.email, c.unsubscribed)
    // Bob had unsubscribed; Dora was deleted subscribed; Eve is new.
    expect(Object.fromEntries(byEmail)).toMatchObject({
      'bob@example.com': true,
      'dora@example.com': false,
      'eve@example.com': false,
    })
  })

  it('a request that says unsubscribed: false subscribes the address again', async () => {
    const first = await create(acme, { email: 'fay@example.com' })
    await oneClick(acme, first.id)
    await remove(acme, first.id)
    expect((await create(acme, { email: 'fay@example.com', unsubscribed: false })).unsubscribed).toBe(false)
  })

  it("stays within its project: another project's contact of that address is not touched", async () => {
    const mine = await create(acme, { email: 'gil@example.com' })
    const theirs = await create(other, { email: 'gil@example.com' })
    await remove(acme, mine.id)
    await oneClick(acme, mine.id)
    expect(await isUnsubscribed(other, theirs.id)).toBe(false)
    expect((await create(other, { email: 'hal@example.com' })).unsubscribed).toBe(false)
    await oneClick(acme, mine.id)
    expect((await create(acme, { email: 'gil@example.com' })).unsubscribed).toBe(true)
  })
})
