import { ROUTES } from '@mailer/contracts'
import { waitFor } from '@mailer/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { email, inSeconds, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

/*
 * The admin mirror (interface.md "Admin mirror of project routes"): every mirrored project route
 * at /v1/admin/projects/:slug/..., checked against its project twin through the real gateway.
 */
const { client } = useStack(['auth', 'email', 'webhook', 'analytics', 'broadcast', 'gateway'], {
  testEnv: { WEBHOOK_ALLOW_PRIVATE: 'true' },
})
let acme: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
})

const mirrored = () => ROUTES.filter((r) => r.auth === 'project' && r.mirror)
/** `/v1/emails/:id` → `/v1/admin/projects/<slug>/emails/x` */
const mirrorOf = (path: string, slug = 'acme') =>
  `/v1/admin/projects/${slug}${path.slice(3).replace(/:[A-Za-z]+/g, 'x')}`

/** The same request on the project route (live key) and on the mirror (admin key). */
async function twin(method: string, path: string, body?: unknown, headers?: Record<string, string>) {
  const opts = { ...(body !== undefined ? { body } : {}), ...(headers ? { headers } : {}) }
  const p = await client.call(method, path, { key: acme.live, ...opts })
  const m = await client.call(method, `/v1/admin/projects/acme${path.slice(3)}`, {
    key: client.admin,
    ...opts,
  })
  return { p, m }
}

describe('every mirrored route', () => {
  it('covers every project route of the catalog except GET /v1/me and GET /v1/api-keys', () => {
    const unmirrored = ROUTES.filter((r) => r.auth === 'project' && !r.mirror).map(
      (r) => `${r.method} ${r.path}`,
    )
    expect(unmirrored.sort()).toEqual(['GET /v1/api-keys', 'GET /v1/me'])
    const areas = new Set(mirrored().map((r) => r.path.split('/')[2]))
    for (const a of [
      'emails',
      'events',
      'domains',
      'webhooks',
      'templates',
      'analytics',
      'contacts',
      'audiences',
      'broadcasts',
    ])
      expect(areas).toContain(a)
  })

  it('is served for the admin key, refused to project keys (401 invalid_api_key), 404 project_not_found for an unknown slug', async () => {
    const problems: string[] = []
    await Promise.all(
      mirrored().map(async (r) => {
        // No body and made-up ids: every write is refused before it changes anything.
        const served = await client.call(r.method, mirrorOf(r.path), { key: client.admin })
        const code = served.body?.error?.code
        if (served.status >= 500 || code === 'route_not_found' || code === 'method_not_allowed')
          problems.push(`${r.method} ${r.path}: ${served.status} ${code}`)
        const keyed = await client.call(r.method, mirrorOf(r.path), { key: acme.live })
        if (keyed.status !== 401 || keyed.body.error.code !== 'invalid_api_key')
          problems.push(`${r.method} ${r.path} with a project key: ${keyed.status}`)
        const unknown = await client.call(r.method, mirrorOf(r.path, 'nobody'), { key: client.admin })
        if (unknown.status !== 404 || unknown.body.error.code !== 'project_not_found')
          problems.push(`${r.method} ${r.path} for an unknown slug: ${unknown.status}`)
      }),
    )
    expect(problems).toEqual([])
  })

  it('a slug no project can have (a NUL, too long) is 404 project_not_found, never 500', async () => {
    for (const slug of ['%00', 'ac%00me', 'x'.repeat(300)]) {
      const r = await client.get(`/v1/admin/projects/${slug}/emails`, client.admin)
      expect([r.status, r.body.error?.code, r.body.error?.param], slug).toEqual([
        404,
        'project_not_found',
        'slug',
      ])
    }
  })

  it('has no /me or GET /api-keys twin', async () => {
    const me = await client.get('/v1/admin/projects/acme/me', client.admin)
    expect(me.status).toBe(404)
    expect(me.body.error.code).toBe('route_not_found')
    // That path exists only to create keys.
    expect((await client.get('/v1/admin/projects/acme/api-keys', client.admin)).status).toBe(405)
  })
})

describe('emails on the mirror', () => {
  it('sends live without an API key (source admin); the rest of the record matches the twin', async () => {
    const body = email(acme.from, { text: 'Twin', tags: { t: '1' } })
    const { p, m } = await twin('POST', '/v1/emails', body)
    expect([p.status, m.status]).toEqual([202, 202])
    expect(m.body).toEqual({ id: expect.stringMatching(/^email_/), status: 'queued' })
    const viaKey = (await client.get(`/v1/emails/${p.body.id}`, acme.live)).body
    const viaMirror = (await client.get(`/v1/admin/projects/acme/emails/${m.body.id}`, client.admin)).body
    expect(viaKey).toMatchObject({ source: 'http', apiKeyId: acme.liveId, mode: 'live' })
    expect(viaMirror).toMatchObject({ source: 'admin', apiKeyId: null, mode: 'live' })
    const strip = ({ id, source, apiKeyId, createdAt, queuedAt, events, ...rest }: any) => ({
      ...rest,
      events: events.map((e: any) => e.type),
    })
    expect(strip(viaMirror)).toEqual(strip(viaKey))
  })

  it('reads, lists and shows content exactly as the project routes do', async () => {
    const sent = await client.post('/v1/emails', acme.live, email(acme.from, { text: 'Read me' }))
    for (const path of [
      `/v1/emails/${sent.body.id}`,
      `/v1/emails/${sent.body.id}/content`,
      '/v1/emails?limit=3',
      '/v1/emails?q=Twin',
    ]) {
      const { p, m } = await twin('GET', path)
      expect(m.status, path).toBe(200)
      expect(m.body, path).toEqual(p.body)
    }
    const bad = await twin('GET', '/v1/emails?status=lost')
    expect(bad.m.status).toBe(400)
    expect(bad.m.body).toEqual(bad.p.body)
  })

  it('batches, honours Idempotency-Key, cancels and reschedules', async () => {
    const batch = await client.post('/v1/admin/projects/acme/emails/batch', client.admin, [
      email(acme.from),
      email('x@else.test'),
    ])
    expect(batch.status).toBe(200)
    expect(batch.body.data[1].error.code).toBe('invalid_sender')
    expect((await client.get(`/v1/emails/${batch.body.data[0].id}`, acme.live)).body.source).toBe('admin')

    const key = { 'Idempotency-Key': 'mirror-1' }
    const first = await client.post('/v1/admin/projects/acme/emails', client.admin, email(acme.from), key)
    const again = await client.post('/v1/admin/projects/acme/emails', client.admin, email(acme.from), key)
    expect(again.body).toEqual({ ...first.body, idempotent: true })

    const later = await client.post(
      '/v1/admin/projects/acme/emails',
      client.admin,
      email(acme.from, { scheduledAt: inSeconds(600) }),
    )
    expect(later.body.status).toBe('scheduled')
    const moved = await client.patch(`/v1/admin/projects/acme/emails/${later.body.id}`, client.admin, {
      scheduledAt: inSeconds(1200),
    })
    expect(moved.status).toBe(200)
    const canceled = await client.del(`/v1/admin/projects/acme/emails/${later.body.id}`, client.admin)
    expect(canceled.body).toEqual({ id: later.body.id, status: 'canceled' })
  })

  it('checks suppression (a test key would not) and applies the limits', async () => {
    await client.post('/v1/admin/suppressions', client.admin, { address: 'blocked@example.com' })
    const input = email(acme.from, { to: 'blocked@example.com' })
    const m = await client.post('/v1/admin/projects/acme/emails', client.admin, input)
    expect(m.status).toBe(422)
    expect(m.body.error).toMatchObject({ code: 'recipient_suppressed', param: 'blocked@example.com' })
    expect((await client.post('/v1/emails', acme.test, input)).status).toBe(200)

    const tiny = await projectWithDomain(client, 'tiny', 'tiny.test', { dailyLimit: 1 })
    expect(
      (await client.post('/v1/admin/projects/tiny/emails', client.admin, email('a@tiny.test'))).status,
    ).toBe(202)
    const over = await client.post('/v1/admin/projects/tiny/emails', client.admin, email('a@tiny.test'))
    expect(over.status).toBe(429)
    expect(over.body.error.code).toBe('daily_limit_exceeded')

    // A disabled project's keys stop working; the operator can still look at it on the mirror.
    await client.del('/v1/admin/projects/tiny', client.admin)
    expect((await client.get('/v1/emails', tiny.live)).body.error.code).toBe('project_disabled')
    const list = await client.get('/v1/admin/projects/tiny/emails', client.admin)
    expect(list.status).toBe(200)
    expect(list.body.data).toHaveLength(1)
  })
})

describe('the other areas on the mirror', () => {
  it('events, analytics and domains read the same as their twins', async () => {
    for (const path of ['/v1/events?limit=5', '/v1/analytics?range=7d', '/v1/domains']) {
      const { p, m } = await twin('GET', path)
      expect(m.status, path).toBe(200)
      expect(m.body, path).toEqual(p.body)
    }
  })

  it('webhooks: create, list, update, rotate, test, deliveries, delete', async () => {
    const base = '/v1/admin/projects/acme/webhooks'
    const made = await client.post(base, client.admin, {
      url: 'http://127.0.0.1:9/hook',
      events: ['email.delivered'],
    })
    expect(made.status).toBe(201)
    expect(made.body.secret).toMatch(/^whsec_/)
    const { p, m } = await twin('GET', '/v1/webhooks')
    expect(m.body).toEqual(p.body)
    expect(p.body.data.map((w: any) => w.id)).toContain(made.body.id)
    const id = made.body.id
    expect((await client.patch(`${base}/${id}`, client.admin, { events: ['*'] })).body.events).toEqual(['*'])
    const rotated = await client.post(`${base}/${id}/rotate-secret`, client.admin)
    expect(rotated.body.secret).toMatch(/^whsec_/)
    expect(rotated.body.secret).not.toBe(made.body.secret)
    const tested = await client.post(`${base}/${id}/test`, client.admin)
    expect(tested.status).toBe(202)
    // The attempt goes out at once; compare the twins once it is recorded, not while it changes.
    await waitFor(
      async () =>
        (await client.get(`/v1/webhooks/${id}/deliveries`, acme.live)).body.data[0]?.responseBody != null,
      { what: 'the test delivery attempt to be recorded' },
    )
    const deliveries = await twin('GET', `/v1/webhooks/${id}/deliveries`)
    expect(deliveries.m.body).toEqual(deliveries.p.body)
    expect(deliveries.m.body.data.map((d: any) => d.id)).toContain(tested.body.deliveryId)
    expect((await client.del(`${base}/${id}`, client.admin)).status).toBe(200)
    expect((await client.get('/v1/webhooks', acme.live)).body.data).toEqual([])
  })

  it('templates: create, read, render, version, delete', async () => {
    const base = '/v1/admin/projects/acme/templates'
    const made = await client.post(base, client.admin, {
      name: 'welcome',
      subject: 'Hi {{name}}',
      html: '<p>Hi {{name}}</p>',
    })
    expect(made.status).toBe(201)
    for (const path of ['/v1/templates/welcome', '/v1/templates', '/v1/templates/welcome/versions']) {
      const { p, m } = await twin('GET', path)
      expect(m.body, path).toEqual(p.body)
    }
    const r = await twin('POST', '/v1/templates/welcome/render', { data: { name: 'Ann' } })
    expect(r.m.body).toEqual(r.p.body)
    expect(r.m.body.subject).toBe('Hi Ann')
    expect(
      (await client.patch(`${base}/welcome`, client.admin, { subject: 'Hello {{name}}' })).body.version,
    ).toBe(2)
    expect((await client.del(`${base}/welcome`, client.admin)).status).toBe(200)
    expect((await client.get('/v1/templates/welcome', acme.live)).status).toBe(404)
  })

  it('contacts, audiences and broadcasts: written on the mirror, read the same on both', async () => {
    const root = '/v1/admin/projects/acme'
    const contact = await client.post(`${root}/contacts`, client.admin, {
      email: 'ann@example.com',
      firstName: 'Ann',
    })
    expect(contact.status).toBe(201)
    const audience = await client.post(`${root}/audiences`, client.admin, { name: 'Newsletter' })
    expect(audience.status).toBe(201)
    const added = await client.post(`${root}/audiences/${audience.body.id}/contacts`, client.admin, {
      contactIds: [contact.body.id],
    })
    expect(added.body).toEqual({ added: 1 })
    const draft = await client.post(`${root}/broadcasts`, client.admin, {
      audienceId: audience.body.id,
      from: acme.from,
      subject: 'News',
      html: '<p>News</p>',
    })
    expect(draft.status).toBe(201)
    for (const path of [
      `/v1/contacts/${contact.body.id}`,
      '/v1/contacts',
      `/v1/audiences/${audience.body.id}`,
      `/v1/audiences/${audience.body.id}/contacts`,
      `/v1/broadcasts/${draft.body.id}`,
      '/v1/broadcasts',
    ]) {
      const { p, m } = await twin('GET', path)
      expect(m.status, path).toBe(200)
      expect(m.body, path).toEqual(p.body)
    }
    expect((await client.del(`${root}/broadcasts/${draft.body.id}`, client.admin)).status).toBe(200)
  })
})
