import { waitFor } from '@mailer/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// Which events the whole pipeline emits (gateway, auth, email, dispatcher through a real SMTP
// relay, webhook to a real HTTP receiver), and that one event is the same in its three places:
// the webhook body, the email's timeline (GET /v1/emails/:id) and GET /v1/events.
// Platform-limit retries wait 3 s and transient ones 0.2-0.5 s, with 2 retries, so a whole
// schedule runs in moments.
const { client, relay, receiver } = useStack(['auth', 'email', 'webhook', 'gateway'], {
  testEnv: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '200' },
  dispatcher: {
    RETRY_BASE_SECONDS: '0.2',
    RETRY_MAX_SECONDS: '0.5',
    PLATFORM_LIMIT_RETRY_SECONDS: '3',
    MAX_RETRIES: '2',
    BREAKER_MIN_CALLS: '10000',
  },
  receiver: true,
})
// Per-domain answers at RCPT TO: a hard bounce, a transient 4xx, the relay's sending quota.
relay.rcpt = (a) =>
  a.endsWith('@dead.example')
    ? { code: 550, message: '5.1.1 No such user' }
    : a.endsWith('@slow.example')
      ? { code: 451, message: '4.3.0 Try again later' }
      : a.endsWith('@quota.example')
        ? { code: 452, message: '4.5.3 Daily sending quota exceeded' }
        : 'accept'
let acme: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
  const hook = await client.post('/v1/webhooks', acme.live, { url: receiver.url() })
  expect(hook.status).toBe(201)
}, 60_000)

const send = async (body: Record<string, unknown>) => {
  const r = await client.post('/v1/emails', acme.live, {
    from: acme.from,
    subject: 'Hi',
    html: '<p>x</p>',
    ...body,
  })
  expect(r.status).toBe(202)
  return r.body.id as string
}
const get = async (id: string) => (await client.get(`/v1/emails/${id}`, acme.live)).body
const until = (id: string, check: (e: any) => boolean, what: string) =>
  waitFor(async () => ((e) => (check(e) ? e : null))(await get(id)), { timeoutMs: 20_000, what })

/** The email's events as its timeline, GET /v1/events and the webhook show them (oldest first). */
async function threeViews(id: string) {
  const record = await get(id)
  const timeline = record.events.map((e: any) => ({
    id: e.id,
    type: e.type,
    createdAt: e.createdAt,
    data: e.data,
  }))
  const listed = (await client.get(`/v1/events?emailId=${id}&limit=100`, acme.live)).body.data.reverse()
  const hooks = await waitFor(
    () => {
      const got = receiver.requests.filter((r) => r.body?.data?.emailId === id).map((r) => r.body)
      return got.length >= timeline.length ? got : null
    },
    { what: `webhook deliveries of ${id}` },
  )
  hooks.sort((a: any, b: any) =>
    a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1,
  )
  return { record, timeline, listed, hooks }
}

describe('events of the pipeline', () => {
  it('mixed relay answers and retries to exhaustion: the same events in the timeline, the list and the webhook', async () => {
    const id = await send({
      to: ['ok@ok.example', 'gone@dead.example', 'later@slow.example'],
      tags: { flow: 'mix' },
    })
    await until(id, (e) => e.status === 'bounced', 'the email settled')
    const { record, timeline, listed, hooks } = await threeViews(id)
    const kinds = timeline.map((e: any) => [e.type, e.data.recipient])
    // One attempt's per-recipient events share its time; among them the order is the relay's.
    expect(kinds.slice(0, 2)).toEqual([
      ['email.queued', null],
      ['email.sent', null],
    ])
    expect(kinds.slice(2, 5)).toEqual(
      expect.arrayContaining([
        ['email.delivered', 'ok@ok.example'],
        ['email.bounced', 'gone@dead.example'],
        ['email.deferred', 'later@slow.example'],
      ]),
    )
    // The last recipient runs out of retries at attempt 3, but the email ends `bounced`, not
    // `failed`: no email.failed (interface.md: "email ended as failed").
    expect(kinds.slice(5)).toEqual([['email.deferred', 'later@slow.example']])
    expect(listed).toEqual(timeline)
    expect(hooks).toEqual(timeline)
    for (const e of timeline) {
      expect(e.id).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/)
      expect(new Date(e.createdAt).toISOString()).toBe(e.createdAt)
      expect(e.data).toMatchObject({ emailId: id, from: acme.from, subject: 'Hi', tags: { flow: 'mix' } })
    }
    const delivered = timeline.find((e: any) => e.type === 'email.delivered')
    expect(delivered.data.delivery).toMatchObject({
      status: 'delivered',
      provider: 'smtp',
      smtpStatusCode: 250,
    })
    expect(Number.isInteger(delivered.data.delivery.deliveryTimeMs)).toBe(true)
    // The reply of the recipient that failed, not the bounce's.
    expect(record.lastError).toBe('451 4.3.0 Try again later')
    expect(record.recipients.map((r: any) => [r.address, r.status])).toEqual([
      ['ok@ok.example', 'delivered'],
      ['gone@dead.example', 'bounced'],
      ['later@slow.example', 'failed'],
    ])
  })
})

describe('cancel', () => {
  it('an email the relay already delivered to a recipient cannot be canceled while its other recipients wait for a platform-limit retry', async () => {
    const id = await send({ to: ['first@ok.example', 'second@quota.example'] })
    // Delivered to the first recipient; back to `queued` for the second (the relay's quota).
    const waiting = await until(
      id,
      (e) => e.status === 'queued' && e.attempts === 1,
      'the platform-limit retry',
    )
    expect(waiting.events.map((e: any) => e.type)).toEqual([
      'email.queued',
      'email.sent',
      'email.delivered',
      'email.retrying',
    ])
    const c = await client.del(`/v1/emails/${id}`, acme.live)
    expect(c.status).toBe(409)
    expect(c.body.error).toMatchObject({ type: 'conflict', code: 'not_cancelable' })
    const after = await get(id)
    expect(after.status).not.toBe('canceled')
    expect(after.events.map((e: any) => e.type)).not.toContain('email.canceled')
  })

  it('an email whose recipients all wait for a platform-limit retry can still be canceled', async () => {
    const id = await send({ to: ['only@quota.example'] })
    await until(id, (e) => e.status === 'queued' && e.attempts === 1, 'the platform-limit retry')
    const c = await client.del(`/v1/emails/${id}`, acme.live)
    expect(c.status).toBe(200)
    expect(c.body).toEqual({ id, status: 'canceled' })
    const { timeline, hooks } = await threeViews(id)
    expect(timeline.map((e: any) => e.type)).toEqual(['email.queued', 'email.retrying', 'email.canceled'])
    expect(hooks).toEqual(timeline)
  })
})
