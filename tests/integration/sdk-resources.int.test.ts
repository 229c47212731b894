import { AdminClient, ENDPOINTS, MailerClient } from '@mailer/client'
import { ROUTES } from '@mailer/contracts'
import { waitFor } from '@mailer/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { shapeCheckingFetch } from '../support/answer-shapes.js'
import { ADMIN_KEY } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'

// Every SDK method against the real services, each answer held to its route's response schema
// (tests/support/answer-shapes.ts): the SDK returns the API's answers as they are, and its types
// are held to those schemas at type-check time, so this closes the loop with what is really sent.
const { stack, receiver } = useStack(['auth', 'email', 'webhook', 'broadcast', 'analytics', 'gateway'], {
  testEnv: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '200', DEV_ROUTES: 'true' },
  receiver: true,
})
const problems: string[] = []
const checked = new Set<string>()
let admin: AdminClient
let mailer: MailerClient
const from = 'Shapes <hello@shapes.test>'

beforeAll(async () => {
  const opts = { baseUrl: stack.gatewayUrl, fetch: shapeCheckingFetch(problems, checked) }
  admin = new AdminClient({ ...opts, adminKey: ADMIN_KEY })
  await admin.projects.create({ slug: 'shapes', name: 'Shapes' })
  await admin.domains.setup('shapes', 'shapes.test')
  const { key } = await admin.apiKeys.create('shapes', { name: 'live', mode: 'live' })
  mailer = new MailerClient({ ...opts, apiKey: key })
})

describe('every SDK method answers its route’s shape', () => {
  it('identity, emails and events', async () => {
    await mailer.me()
    await mailer.apiKeys.list()
    const sent = await mailer.emails.send({ from, to: 'ana@example.com', subject: 'Hi', text: 'x' })
    await mailer.emails.sendBatch([{ from, to: 'bo@example.com', subject: 'Hi', text: 'x' }])
    await mailer.emails.sendBatch([{ from, to: 'cy@example.com', subject: 'Hi', text: 'x' }], {
      dryRun: true,
    })
    await mailer.emails.list({ limit: 1 })
    await mailer.emails.get(sent.id)
    await mailer.emails.content(sent.id)
    const later = await mailer.emails.send({
      from,
      to: 'di@example.com',
      subject: 'Later',
      text: 'x',
      scheduledAt: new Date(Date.now() + 3_600_000).toISOString(),
    })
    await mailer.emails.reschedule(later.id, new Date(Date.now() + 7_200_000))
    await mailer.emails.cancel(later.id)
    await waitFor(async () => (await mailer.events.list({ emailId: sent.id })).data.length > 0 || null)
    await mailer.analytics.get({ range: '7d' })
    await mailer.domains.list()
  })

  it('webhooks and their deliveries', async () => {
    const wh = await mailer.webhooks.create({ url: receiver.url('/shapes') })
    await mailer.webhooks.list()
    await mailer.webhooks.get(wh.id)
    await mailer.webhooks.update(wh.id, { events: ['email.delivered'] })
    const { deliveryId } = await mailer.webhooks.test(wh.id)
    await waitFor(async () => (await mailer.webhooks.deliveries(wh.id)).data[0]?.status === 'success' || null)
    await mailer.webhooks.retryDelivery(wh.id, deliveryId)
    await mailer.webhooks.rotateSecret(wh.id)
    await mailer.webhooks.delete(wh.id)
  })

  it('templates', async () => {
    await mailer.templates.create({
      name: 'welcome',
      subject: 'Hi {{name}}',
      html: '<p>Hi {{name}}</p>',
      variables: [{ name: 'name', example: 'Ana' }],
    })
    await mailer.templates.list()
    await mailer.templates.get('welcome')
    await mailer.templates.update('welcome', { subject: 'Hello {{name}}' })
    await mailer.templates.versions('welcome')
    await mailer.templates.restore('welcome', 1)
    expect((await mailer.templates.render('welcome', { name: 'Bo' })).subject).toBe('Hi Bo')
    await mailer.templates.delete('welcome')
  })

  it('contacts, audiences and broadcasts', async () => {
    const ana = await mailer.contacts.create({ email: 'ana@example.com', firstName: 'Ana' })
    await mailer.contacts.import([{ email: 'bo@example.com' }, { email: 'cy@example.com' }])
    await mailer.contacts.list({ q: 'example' })
    await mailer.contacts.get(ana.id)
    await mailer.contacts.update(ana.id, { lastName: 'Lee' })
    const aud = await mailer.audiences.create({ name: 'Everyone' })
    await mailer.audiences.list()
    await mailer.audiences.update(aud.id, { name: 'All' })
    const bo = (await mailer.contacts.list({ q: 'bo@' })).data[0]!
    expect(await mailer.audiences.addContacts(aud.id, [ana.id, bo.id])).toEqual({ added: 2 })
    // The audience's contacts searched like the contact list.
    const found = await mailer.audiences.listContacts(aud.id, { q: 'ana' })
    expect(found.data.map((c) => c.email)).toEqual(['ana@example.com'])
    await mailer.audiences.removeContacts(aud.id, [bo.id])
    await mailer.audiences.get(aud.id)
    const draft = await mailer.broadcasts.create({
      audienceId: aud.id,
      from,
      subject: 'News',
      html: '<p>x</p>',
    })
    await mailer.broadcasts.list()
    await mailer.broadcasts.update(draft.id, { name: 'March' })
    await mailer.broadcasts.get(draft.id)
    const scheduledAt = new Date(Date.now() + 3_600_000).toISOString()
    expect((await mailer.broadcasts.send(draft.id, { scheduledAt })).status).toBe('scheduled')
    await mailer.broadcasts.cancel(draft.id)
    const other = await mailer.broadcasts.create({
      audienceId: aud.id,
      from,
      subject: 'Draft',
      html: '<p>x</p>',
    })
    await mailer.broadcasts.delete(other.id)
    await mailer.audiences.delete(aud.id)
    await mailer.contacts.delete(bo.id)
  })

  it('the admin routes', async () => {
    await admin.projects.list()
    await admin.projects.get('shapes')
    await admin.projects.update('shapes', { dailyLimit: 100 })
    const k = await admin.apiKeys.create('shapes', { name: 'spare', mode: 'test' })
    await admin.apiKeys.list('shapes')
    await admin.apiKeys.rename(k.id, 'renamed')
    await admin.apiKeys.revoke(k.id)
    await admin.domains.list()
    await admin.suppressions.add({ address: 'gone@example.com' })
    await admin.suppressions.list({ q: 'gone' })
    await admin.suppressions.remove('gone@example.com')
    const page = await admin.emails.list({ project: 'shapes', limit: 1 })
    const id = page.data[0]!.id
    await admin.emails.get(id)
    await admin.emails.content(id)
    await admin.emails.resend(id)
    await admin.events.list({ project: 'shapes' })
    await admin.analytics.get({ project: 'shapes' })
    await admin.stats()
    await admin.dev.createEvent({ emailId: id, type: 'email.delivered' })
    const m = admin.project('shapes')
    await m.emails.list({ limit: 1 })
    await m.domains.setup('shapes.test')
    await admin.projects.disable('shapes')
  })

  it('reached every route, and found no answer off its schema', () => {
    expect(problems).toEqual([])
    const routes = Object.values(ENDPOINTS).map(([m, p]) => `${m} ${p}`)
    expect(routes.filter((r) => !checked.has(r))).toEqual([])
    expect(ROUTES.length).toBe(routes.length)
  })
})
