import { waitFor } from '@mailer/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../support/db.js'
import { email, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

/*
 * Admin email routes (interface.md "Admin routes", contract.md part 2): the list across
 * projects, any project's email and content, resend and the fake-event dev route (the stats:
 * admin-stats.int.test.ts).
 */
const { te, stack, client, receiver } = useStack(['auth', 'email', 'webhook', 'gateway'], {
  testEnv: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '200' },
  env: { DEV_ROUTES: 'true' },
  receiver: true,
})
let acme: Awaited<ReturnType<typeof projectWithDomain>>
let other: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
  other = await projectWithDomain(client, 'other')
})

const send = async (key: string, body: unknown) => {
  const r = await client.post('/v1/emails', key, body)
  if (r.status >= 300) throw new Error(`send: ${r.status} ${JSON.stringify(r.body)}`)
  return r.body.id as string
}
const admin = (path: string) => client.get(path, client.admin)

describe('GET /v1/admin/emails', () => {
  it('lists every project, newest first, each item with its projectId; ?project=<slug> for one', async () => {
    const a = await send(acme.live, email(acme.from, { subject: 'Cross A' }))
    const b = await send(other.live, email(other.from, { subject: 'Cross B' }))
    const all = await admin('/v1/admin/emails?q=Cross')
    expect(all.status).toBe(200)
    expect(all.body.data.map((e: any) => [e.id, e.projectId])).toEqual([
      [b, other.project.id],
      [a, acme.project.id],
    ])
    const { projectId, ...item } = all.body.data[1]
    expect(item).toEqual((await client.get('/v1/emails?q=Cross', acme.live)).body.data[0])

    const one = await admin('/v1/admin/emails?project=other&q=Cross')
    expect(one.body.data.map((e: any) => e.id)).toEqual([b])
    const paged = await admin('/v1/admin/emails?q=Cross&limit=1')
    expect(paged.body.data.map((e: any) => e.id)).toEqual([b])
    const next = await admin(`/v1/admin/emails?q=Cross&limit=1&cursor=${paged.body.nextCursor}`)
    expect(next.body).toMatchObject({ data: [{ id: a }], nextCursor: null })
  })

  it('refuses an unknown project and bad query parameters with the contract errors', async () => {
    const cases: Array<[string, number, string, string]> = [
      ['project=nobody', 404, 'project_not_found', 'project'],
      ['project=Not%20A%20Slug', 400, 'invalid_query', 'project'],
      ['limit=500', 400, 'invalid_query', 'limit'],
    ]
    for (const [query, status, code, param] of cases) {
      const r = await admin(`/v1/admin/emails?${query}`)
      expect([r.status, r.body.error.code, r.body.error.param]).toEqual([status, code, param])
    }
  })
})

describe('forged cursors', () => {
  it('a cursor whose time PostgreSQL cannot hold is 400 invalid_query on every email and event list, never 500', async () => {
    const forged = (ts: string, id: string) => Buffer.from(`${ts}|${id}`).toString('base64url')
    const emailId = 'email_01ARZ3NDEKTSV4RRFFQ69G5FAV'
    const eventId = 'evt_01ARZ3NDEKTSV4RRFFQ69G5FAV'
    for (const ts of [
      '-100000-01-01T00:00:00.000Z',
      '+200000-01-01T00:00:00.000Z',
      '-001000-06-01T00:00:00.000Z',
    ]) {
      for (const [path, key, id] of [
        ['/v1/admin/emails', client.admin, emailId],
        ['/v1/admin/events', client.admin, eventId],
        ['/v1/emails', acme.live, emailId],
        ['/v1/events', acme.live, eventId],
      ] as const) {
        const r = await client.get(`${path}?cursor=${forged(ts, id)}`, key)
        expect([r.status, r.body.error?.code, r.body.error?.param], `${path} ${ts}`).toEqual([
          400,
          'invalid_query',
          'cursor',
        ])
      }
    }
    // The cursors the API hands out still page.
    const page = await client.get('/v1/admin/emails?limit=1', client.admin)
    expect(page.body.nextCursor).toEqual(expect.any(String))
    expect(
      (await client.get(`/v1/admin/emails?limit=1&cursor=${page.body.nextCursor}`, client.admin)).status,
    ).toBe(200)
  })

  it("a cursor another list returned is 400 invalid_query, not a page of this list's rows", async () => {
    await send(acme.live, email(acme.from, { subject: 'Cursor 1' }))
    await send(acme.live, email(acme.from, { subject: 'Cursor 2' }))
    const hook = await client.post('/v1/webhooks', acme.live, { url: receiver.url() })
    await client.post(`/v1/webhooks/${hook.body.id}/test`, acme.live)
    await client.post(`/v1/webhooks/${hook.body.id}/test`, acme.live)
    const next = async (path: string, key: string) => {
      const r = await client.get(`${path}${path.includes('?') ? '&' : '?'}limit=1`, key)
      expect(r.body.nextCursor, path).toEqual(expect.any(String))
      return r.body.nextCursor as string
    }
    const cursors = {
      emails: await next('/v1/emails', acme.live),
      events: await next('/v1/events', acme.live),
      deliveries: await next(`/v1/webhooks/${hook.body.id}/deliveries`, acme.live),
    }
    const lists: Array<[string, string, keyof typeof cursors]> = [
      ['/v1/emails', acme.live, 'emails'],
      ['/v1/admin/emails', client.admin, 'emails'],
      ['/v1/events', acme.live, 'events'],
      ['/v1/admin/events', client.admin, 'events'],
      ['/v1/admin/projects/acme/events', client.admin, 'events'],
      [`/v1/webhooks/${hook.body.id}/deliveries`, acme.live, 'deliveries'],
    ]
    for (const [path, key, own] of lists) {
      for (const [from, cursor] of Object.entries(cursors)) {
        const r = await client.get(`${path}?limit=1&cursor=${cursor}`, key)
        if (from === own) expect(r.status, `${path} with its own cursor`).toBe(200)
        else
          expect(
            [r.status, r.body.error?.code, r.body.error?.param],
            `${path} with a ${from} cursor`,
          ).toEqual([400, 'invalid_query', 'cursor'])
      }
    }
  })
})

describe('GET /v1/admin/emails/:id and /content', () => {
  it("answers any project's email in the project routes' shapes, the email with its projectId", async () => {
    const id = await send(other.live, email(other.from, { text: 'Plain', headers: { 'X-Ref': '7' } }))
    for (const suffix of ['', '/content']) {
      const viaAdmin = await admin(`/v1/admin/emails/${id}${suffix}`)
      expect(viaAdmin.status).toBe(200)
      const viaProject = (await client.get(`/v1/emails/${id}${suffix}`, other.live)).body
      // Found by id alone, the email names its project (whose routes cancel or reschedule it).
      expect(viaAdmin.body).toEqual(suffix ? viaProject : { ...viaProject, projectId: other.project.id })
    }
    const missing = await admin('/v1/admin/emails/email_01ARZ3NDEKTSV4RRFFQ69G5FAV')
    expect(missing.status).toBe(404)
    expect(missing.body.error.code).toBe('email_not_found')
  })
})

describe('POST /v1/admin/emails/:id/resend', () => {
  it('sends a new live email from the stored content, tagged resent_from, source admin', async () => {
    const attachment = { filename: 'note.txt', content: Buffer.from('hello').toString('base64') }
    const id = await send(
      acme.live,
      email(acme.from, { text: 'Again', cc: 'cc@example.com', tags: { k: 'v' }, attachments: [attachment] }),
    )
    const r = await client.post(`/v1/admin/emails/${id}/resend`, client.admin)
    expect(r.status).toBe(202)
    expect(r.body).toEqual({ id: expect.stringMatching(/^email_/), status: 'queued' })
    expect(r.body.id).not.toBe(id)

    const [orig, copy] = await Promise.all([
      admin(`/v1/admin/emails/${id}`),
      admin(`/v1/admin/emails/${r.body.id}`),
    ])
    expect(copy.body).toMatchObject({
      source: 'admin',
      apiKeyId: null,
      mode: 'live',
      from: orig.body.from,
      to: orig.body.to,
      cc: orig.body.cc,
      subject: orig.body.subject,
      tags: { k: 'v', resent_from: id },
    })
    const [a, b] = await Promise.all([
      admin(`/v1/admin/emails/${id}/content`),
      admin(`/v1/admin/emails/${r.body.id}/content`),
    ])
    expect(b.body).toEqual(a.body)
    expect(b.body.attachments).toEqual([{ filename: 'note.txt', type: 'text/plain', size: 5 }])
  })

  it('404 content_expired once the content is gone; 404 email_not_found for no email', async () => {
    const id = await send(acme.live, email(acme.from))
    await sql(te, `UPDATE email_contents SET expires_at = now() - interval '1 day' WHERE email_id = $1`, [id])
    for (const r of [
      await client.post(`/v1/admin/emails/${id}/resend`, client.admin),
      await admin(`/v1/admin/emails/${id}/content`),
    ]) {
      expect(r.status).toBe(404)
      expect(r.body.error).toMatchObject({ type: 'not_found', code: 'content_expired' })
    }
    const none = await client.post('/v1/admin/emails/email_01ARZ3NDEKTSV4RRFFQ69G5FAV/resend', client.admin)
    expect(none.body.error.code).toBe('email_not_found')
  })
})

describe('POST /v1/admin/dev/events (DEV_ROUTES=true)', () => {
  const fake = (body: unknown) => client.post('/v1/admin/dev/events', client.admin, body)

  it('records a fake delivery on the timeline, moves the statuses and reaches webhooks', async () => {
    const hook = await client.post('/v1/webhooks', acme.live, { url: receiver.url() })
    expect(hook.status).toBe(201)
    const id = await send(acme.live, email(acme.from, { to: ['dev1@example.com', 'dev2@example.com'] }))

    const r = await fake({ emailId: id, type: 'email.delivered' })
    expect(r.status).toBe(201)
    expect(r.body).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'email.delivered',
      createdAt: expect.any(String),
      data: expect.objectContaining({
        emailId: id,
        recipient: 'dev1@example.com',
        subject: 'Hello',
        delivery: expect.objectContaining({ status: 'delivered', provider: 'dev' }),
        dev: true,
      }),
    })
    const got = (await client.get(`/v1/emails/${id}`, acme.live)).body
    // One recipient delivered, the other still waiting for the dispatcher: the email stays queued.
    expect(got.status).toBe('queued')
    expect(got.recipients.map((x: any) => [x.address, x.status])).toEqual([
      ['dev1@example.com', 'delivered'],
      ['dev2@example.com', 'queued'],
    ])
    // The recipient keeps the delivery time, as a real delivery's does.
    expect(got.recipients[0]).toMatchObject({
      smtpStatus: 250,
      deliveryMs: r.body.data.delivery.deliveryTimeMs,
    })
    expect(got.recipients[1].deliveryMs).toBeNull()
    expect(got.events.map((e: any) => e.id)).toContain(r.body.id)

    const delivered = await waitFor(
      () => receiver.requests.find((q) => q.headers['service-event-id'] === r.body.id),
      {
        timeoutMs: 20_000,
        what: 'the faked event at the webhook',
      },
    )
    expect(delivered.body).toEqual(r.body)
  })

  it('fakes email.sent and email.failed for the whole email (recipient null), as the dispatcher records them', async () => {
    const id = await send(acme.live, email(acme.from, { to: ['whole1@example.com', 'whole2@example.com'] }))
    const sent = await fake({ emailId: id, type: 'email.sent' })
    expect(sent.status).toBe(201)
    expect(sent.body.data).toMatchObject({ emailId: id, recipient: null, recipientCount: 2, dev: true })
    const failed = await fake({ emailId: id, type: 'email.failed', recipient: 'whole2@example.com' })
    expect(failed.status).toBe(201)
    expect(failed.body.data).toMatchObject({ emailId: id, recipient: null, code: 'dev_event', dev: true })
    // The named recipient is the one whose status moves.
    const got = (await admin(`/v1/admin/emails/${id}`)).body
    expect(got.recipients.map((x: any) => [x.address, x.status])).toEqual([
      ['whole1@example.com', 'sent'],
      ['whole2@example.com', 'failed'],
    ])
    expect(got.events.find((e: any) => e.id === failed.body.id).recipient).toBeNull()
    const hook = await client.post('/v1/webhooks', acme.live, { url: receiver.url('/whole') })
    expect(hook.status).toBe(201)
    const again = await fake({ emailId: id, type: 'email.failed' })
    const delivered = await waitFor(
      () => receiver.requests.find((q) => q.headers['service-event-id'] === again.body.id),
      { timeoutMs: 20_000, what: 'the faked email.failed at the webhook' },
    )
    expect(delivered.body.data.recipient).toBeNull()
  })

  it('a fake bounce adds a hard_bounce suppression; a complaint upgrades it; the ranking holds', async () => {
    const id = await send(acme.live, email(acme.from, { to: 'bouncy@example.com' }))
    expect((await fake({ emailId: id, type: 'email.bounced', recipient: 'Bouncy@Example.com' })).status).toBe(
      201,
    )
    const list = async () =>
      (await admin('/v1/admin/suppressions?q=bouncy')).body.data.map((s: any) => [
        s.address,
        s.reason,
        s.sourceEmailId,
      ])
    expect(await list()).toEqual([['bouncy@example.com', 'hard_bounce', id]])
    expect((await admin(`/v1/admin/emails/${id}`)).body).toMatchObject({
      status: 'bounced',
      recipients: [{ address: 'bouncy@example.com', status: 'bounced', bounceType: 'hard' }],
    })

    expect((await fake({ emailId: id, type: 'email.complained' })).status).toBe(201)
    expect(await list()).toEqual([['bouncy@example.com', 'complaint', id]])
    expect((await admin(`/v1/admin/emails/${id}`)).body.status).toBe('complained')

    // Lower in the ranking: recorded on the timeline, statuses untouched.
    expect((await fake({ emailId: id, type: 'email.delivered' })).status).toBe(201)
    const after = (await admin(`/v1/admin/emails/${id}`)).body
    expect(after.status).toBe('complained')
    expect(after.events.map((e: any) => e.type).slice(-3)).toEqual([
      'email.bounced',
      'email.complained',
      'email.delivered',
    ])
  })

  it('refuses bad input with the contract errors', async () => {
    const id = await send(acme.live, email(acme.from))
    const cases: Array<[unknown, number, string, string | undefined]> = [
      [undefined, 400, 'missing_body', undefined],
      [{ emailId: id, type: 'email.opened' }, 400, 'invalid_body', 'type'],
      [
        { emailId: id, type: 'email.delivered', recipient: 'stranger@example.com' },
        400,
        'invalid_body',
        'recipient',
      ],
      [
        { emailId: 'email_01ARZ3NDEKTSV4RRFFQ69G5FAV', type: 'email.delivered' },
        404,
        'email_not_found',
        'emailId',
      ],
    ]
    for (const [body, status, code, param] of cases) {
      const r = await fake(body)
      expect([r.status, r.body.error.code, r.body.error.param]).toEqual([status, code, param])
    }
  })
})

describe('admin only', () => {
  it('project keys are not the admin key on any admin email route (401 invalid_api_key)', async () => {
    const id = await send(acme.live, email(acme.from))
    const routes: Array<[string, string]> = [
      ['GET', '/v1/admin/emails'],
      ['GET', `/v1/admin/emails/${id}`],
      ['GET', `/v1/admin/emails/${id}/content`],
      ['POST', `/v1/admin/emails/${id}/resend`],
      ['GET', '/v1/admin/stats'],
      ['POST', '/v1/admin/dev/events'],
    ]
    for (const [method, path] of routes) {
      for (const key of [acme.live, acme.test]) {
        const r = await client.call(method, path, { key })
        expect([path, r.status, r.body.error.type, r.body.error.code]).toEqual([
          path,
          401,
          'authentication_error',
          'invalid_api_key',
        ])
      }
      expect((await client.call(method, path, { key: 'not-the-admin-key' })).status).toBe(401)
    }
  })

  // Last: restarts the email service without DEV_ROUTES.
  it('the dev route does not exist without DEV_ROUTES=true', async () => {
    await stack.stop('email')
    await stack.start('email', { DEV_ROUTES: 'false' })
    const id = await send(acme.live, email(acme.from))
    const r = await client.post('/v1/admin/dev/events', client.admin, {
      emailId: id,
      type: 'email.delivered',
    })
    expect(r.status).toBe(404)
    expect(r.body.error).toMatchObject({ type: 'not_found', code: 'route_not_found' })
  })
})
