import { waitFor } from '@mailer/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'
import { sql } from '../support/webhooks.js'

const { te, client, receiver } = useStack(['auth', 'webhook', 'gateway'], {
  testEnv: { WEBHOOK_ALLOW_PRIVATE: 'true' },
  receiver: true,
})
let a: Awaited<ReturnType<typeof createProject>>
let b: Awaited<ReturnType<typeof createProject>>

beforeAll(async () => {
  a = await createProject(client, 'wh-a')
  b = await createProject(client, 'wh-b')
})

const ID = /^wh_[0-9A-Z]{26}$/

describe('webhook CRUD', () => {
  it('creates with defaults and returns the secret only on create', async () => {
    const r = await client.post('/v1/webhooks', a.live, { url: receiver.url() })
    expect(r.status).toBe(201)
    expect(r.body).toEqual({
      id: expect.stringMatching(ID),
      url: receiver.url(),
      events: ['*'],
      enabled: true,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9]{32}$/),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    })
    const list = await client.get('/v1/webhooks', a.live)
    expect(list.status).toBe(200)
    expect(Object.keys(list.body)).toEqual(['data'])
    const mine = list.body.data.find((w: any) => w.id === r.body.id)
    expect(mine).toEqual({
      id: r.body.id,
      url: receiver.url(),
      events: ['*'],
      enabled: true,
      createdAt: r.body.createdAt,
      updatedAt: r.body.updatedAt,
    })
  })

  it('takes explicit events and enabled, and changes url, events and enabled with PATCH', async () => {
    const r = await client.post('/v1/webhooks', a.live, {
      url: 'https://example.com/hooks',
      events: ['email.delivered', 'email.bounced', 'email.delivered'],
      enabled: false,
    })
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ events: ['email.delivered', 'email.bounced'], enabled: false })
    // Duplicates are dropped, however many: a list longer than the number of types is not refused for that.
    const many = await client.post('/v1/webhooks', a.live, {
      url: 'https://example.com/hooks',
      events: [...Array(20).fill('email.sent'), 'email.opened'],
    })
    expect(many.status).toBe(201)
    expect(many.body.events).toEqual(['email.sent', 'email.opened'])
    const u = await client.patch(`/v1/webhooks/${r.body.id}`, a.live, {
      url: receiver.url('/v2'),
      events: ['*'],
      enabled: true,
    })
    expect(u.status).toBe(200)
    expect(u.body).toMatchObject({ id: r.body.id, url: receiver.url('/v2'), events: ['*'], enabled: true })
    expect(u.body.secret).toBeUndefined()
    expect(Date.parse(u.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(r.body.updatedAt))
    const same = await client.patch(`/v1/webhooks/${r.body.id}`, a.live, {})
    expect(same.body).toMatchObject({ url: receiver.url('/v2'), enabled: true })
  })

  it('retrieves one webhook by id, without its secret', async () => {
    const r = await client.post('/v1/webhooks', a.live, { url: receiver.url('/one'), events: ['email.sent'] })
    const g = await client.get(`/v1/webhooks/${r.body.id}`, a.live)
    expect(g.status).toBe(200)
    const { secret: _, ...record } = r.body
    expect(g.body).toEqual(record)
    const off = await client.patch(`/v1/webhooks/${r.body.id}`, a.live, { enabled: false })
    expect((await client.get(`/v1/webhooks/${r.body.id}`, a.live)).body).toEqual(off.body)
    const mirror = await client.get(`/v1/admin/projects/wh-a/webhooks/${r.body.id}`, client.admin)
    expect(mirror.body).toEqual(off.body)
    for (const res of [
      await client.get(`/v1/webhooks/${r.body.id}`, b.live),
      await client.get('/v1/webhooks/wh_01ARZ3NDEKTSV4RRFFQ69G5FAV', a.live),
    ]) {
      expect(res.status).toBe(404)
      expect(res.body.error).toMatchObject({ type: 'not_found', code: 'webhook_not_found' })
    }
  })

  it('rotates the secret', async () => {
    const r = await client.post('/v1/webhooks', a.live, { url: receiver.url() })
    const rot = await client.post(`/v1/webhooks/${r.body.id}/rotate-secret`, a.live)
    expect(rot.status).toBe(200)
    expect(rot.body.secret).toMatch(/^whsec_[A-Za-z0-9]{32}$/)
    expect(rot.body.secret).not.toBe(r.body.secret)
    const rows = await sql(te, 'SELECT secret FROM webhooks WHERE id = $1', [r.body.id])
    expect(rows[0].secret).toBe(rot.body.secret)
  })

  it('deletes a webhook together with its deliveries', async () => {
    const r = await client.post('/v1/webhooks', a.live, { url: receiver.url('/del') })
    const t = await client.post(`/v1/webhooks/${r.body.id}/test`, a.live)
    expect(t.status).toBe(202)
    await waitFor(() => receiver.requests.some((q) => q.path === '/del'))
    const del = await client.del(`/v1/webhooks/${r.body.id}`, a.live)
    expect(del.status).toBe(200)
    expect(del.body).toEqual({ id: r.body.id, deleted: true })
    expect(
      (
        await sql(te, 'SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1', [r.body.id])
      )[0].n,
    ).toBe(0)
    const again = await client.del(`/v1/webhooks/${r.body.id}`, a.live)
    expect(again.status).toBe(404)
    expect(again.body.error).toMatchObject({ type: 'not_found', code: 'webhook_not_found' })
    const list = await client.get('/v1/webhooks', a.live)
    expect(list.body.data.map((w: any) => w.id)).not.toContain(r.body.id)
  })

  it('changes racing a deletion answer 404, never 500', async () => {
    for (let round = 0; round < 3; round++) {
      const r = await client.post('/v1/webhooks', a.live, { url: receiver.url('/race') })
      const path = `/v1/webhooks/${r.body.id}`
      const answers = await Promise.all([
        ...Array.from({ length: 4 }, () => client.del(path, a.live)),
        client.patch(path, a.live, { enabled: false }),
        client.post(`${path}/rotate-secret`, a.live),
      ])
      const deletes = answers.slice(0, 4).map((x) => x.status)
      expect(deletes.filter((s) => s === 200)).toHaveLength(1)
      for (const x of answers) {
        expect([200, 404]).toContain(x.status)
        if (x.status === 404) expect(x.body.error.code).toBe('webhook_not_found')
      }
    }
  })

  it('lists deliveries newest first with limit and cursor', async () => {
    const r = await client.post('/v1/webhooks', a.live, { url: receiver.url('/page') })
    const ids: string[] = []
    for (let i = 0; i < 5; i++)
      ids.push((await client.post(`/v1/webhooks/${r.body.id}/test`, a.live)).body.deliveryId)
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const page: any = await client.get(
        `/v1/webhooks/${r.body.id}/deliveries?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        a.live,
      )
      expect(page.status).toBe(200)
      expect(page.body.data.length).toBeLessThanOrEqual(2)
      seen.push(...page.body.data.map((d: any) => d.id))
      cursor = page.body.nextCursor
    } while (cursor)
    expect(seen).toEqual([...ids].reverse())
    const one = await client.get(`/v1/webhooks/${r.body.id}/deliveries`, a.live)
    expect(Object.keys(one.body).sort()).toEqual(['data', 'nextCursor'])
    expect(one.body.nextCursor).toBeNull()
    expect(Object.keys(one.body.data[0]).sort()).toEqual(
      [
        'attempt',
        'completedAt',
        'createdAt',
        'eventId',
        'eventType',
        'id',
        'nextAttemptAt',
        'responseBody',
        'responseCode',
        'status',
        'webhookId',
      ].sort(),
    )
  })
})

describe('webhooks per project', () => {
  it('takes at most 100 webhooks per project, also when creates race, and a deletion frees a place', async () => {
    const c = await createProject(client, 'wh-cap')
    for (let i = 0; i < 97; i++)
      expect((await client.post('/v1/webhooks', c.live, { url: receiver.url(`/cap${i}`) })).status).toBe(201)
    const racing = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        i % 2
          ? client.post('/v1/webhooks', c.live, { url: receiver.url('/cap-race') })
          : client.post('/v1/admin/projects/wh-cap/webhooks', client.admin, {
              url: receiver.url('/cap-race'),
            }),
      ),
    )
    expect(racing.map((r) => r.status).sort()).toEqual([201, 201, 201, 409, 409, 409])
    for (const r of racing.filter((x) => x.status === 409))
      expect(r.body.error).toMatchObject({ type: 'conflict', code: 'webhook_limit_reached' })
    const list = await client.get('/v1/webhooks', c.live)
    expect(list.body.data).toHaveLength(100)
    expect((await client.del(`/v1/webhooks/${list.body.data[0].id}`, c.live)).status).toBe(200)
    expect((await client.post('/v1/webhooks', c.live, { url: receiver.url('/cap-again') })).status).toBe(201)
    // Other projects have their own 100.
    expect((await client.post('/v1/webhooks', b.live, { url: receiver.url('/cap-other') })).status).toBe(201)
  })
})

describe('isolation between projects', () => {
  it("answers 404 webhook_not_found for another project's webhook on every route", async () => {
    const r = await client.post('/v1/webhooks', a.live, { url: receiver.url() })
    const id = r.body.id
    const calls = [
      client.patch(`/v1/webhooks/${id}`, b.live, { enabled: false }),
      client.del(`/v1/webhooks/${id}`, b.live),
      client.post(`/v1/webhooks/${id}/rotate-secret`, b.live),
      client.get(`/v1/webhooks/${id}/deliveries`, b.live),
      client.post(`/v1/webhooks/${id}/test`, b.live),
      client.post(`/v1/webhooks/${id}/deliveries/whd_01ARZ3NDEKTSV4RRFFQ69G5FAV/retry`, b.live),
      client.patch('/v1/webhooks/wh_01ARZ3NDEKTSV4RRFFQ69G5FAV', a.live, { enabled: false }),
    ]
    for (const res of await Promise.all(calls)) {
      expect(res.status).toBe(404)
      expect(res.body.error).toMatchObject({ type: 'not_found', code: 'webhook_not_found' })
    }
    expect((await client.get('/v1/webhooks', b.live)).body.data.map((w: any) => w.id)).not.toContain(id)
    const still = await sql(te, 'SELECT enabled FROM webhooks WHERE id = $1', [id])
    expect(still[0].enabled).toBe(true)
  })

  it('a test key manages the same project webhooks', async () => {
    const r = await client.post('/v1/webhooks', a.test, { url: receiver.url('/from-test-key') })
    expect(r.status).toBe(201)
    expect((await client.get('/v1/webhooks', a.live)).body.data.map((w: any) => w.id)).toContain(r.body.id)
  })
})

describe('admin mirror', () => {
  it('serves the webhook routes under /v1/admin/projects/:slug', async () => {
    const r = await client.post('/v1/admin/projects/wh-b/webhooks', client.admin, {
      url: receiver.url('/mirror'),
    })
    expect(r.status).toBe(201)
    expect(r.body.secret).toMatch(/^whsec_/)
    const own = await client.get('/v1/webhooks', b.live)
    expect(own.body.data.map((w: any) => w.id)).toContain(r.body.id)
    const list = await client.get('/v1/admin/projects/wh-b/webhooks', client.admin)
    expect(list.body.data.map((w: any) => w.id)).toContain(r.body.id)
    const off = await client.patch(`/v1/admin/projects/wh-b/webhooks/${r.body.id}`, client.admin, {
      enabled: false,
    })
    expect(off.body.enabled).toBe(false)
    const cross = await client.get(`/v1/admin/projects/wh-a/webhooks/${r.body.id}/deliveries`, client.admin)
    expect(cross.status).toBe(404)
    const unknown = await client.get('/v1/admin/projects/nope/webhooks', client.admin)
    expect(unknown.status).toBe(404)
    expect(unknown.body.error.code).toBe('project_not_found')
    const noKey = await client.get('/v1/webhooks', null)
    expect(noKey.status).toBe(401)
  })
})

describe('validation', () => {
  const bad = async (body: unknown, param: string | undefined, code = 'invalid_body') => {
    const r = await client.post('/v1/webhooks', a.live, body)
    expect(r.status).toBe(400)
    expect(r.body.error).toMatchObject({ type: 'validation_error', code, ...(param ? { param } : {}) })
    return r
  }

  it('rejects bad bodies with invalid_body and the offending param', async () => {
    await bad({}, 'url')
    await bad({ url: 'ftp://example.com/x' }, 'url')
    await bad({ url: 'example.com/hook' }, 'url')
    await bad({ url: 'http://' }, 'url')
    await bad({ url: 42 }, 'url')
    // Port 0 parses, but nothing can be reached there: refused when saved, not failed for a day.
    const port0 = await bad({ url: 'https://example.com:0/hook' }, 'url')
    expect(port0.body.error.message).toBe('url: url port must be from 1 to 65535')
    // Credentials are sent decoded (Basic authorization): a stray % could never be sent.
    await bad({ url: 'https://ops%zz:secret@example.com/hook' }, 'url')
    await bad({ url: 'https://ops:50%off@example.com/hook' }, 'url')
    await bad({ url: 'https://example.com', events: 'email.delivered' }, 'events')
    await bad({ url: 'https://example.com', events: [] }, 'events')
    await bad({ url: 'https://example.com', events: ['email.delivered', 'email.nope'] }, 'events.1')
    await bad({ url: 'https://example.com', events: ['email.test'] }, 'events.0')
    await bad({ url: 'https://example.com', enabled: 'yes' }, 'enabled')
    await bad({ url: 'https://example.com', secret: 'whsec_mine' }, undefined)
    const notJson = await client.call('POST', '/v1/webhooks', {
      key: a.live,
      rawBody: '{nope',
      headers: { 'content-type': 'application/json' },
    })
    expect(notJson.body.error.code).toBe('invalid_body')
    const none = await client.call('POST', '/v1/webhooks', { key: a.live })
    expect(none.status).toBe(400)
    expect(none.body.error.code).toBe('missing_body')
  })

  it('validates PATCH fields and list queries', async () => {
    const r = await client.post('/v1/webhooks', a.live, { url: receiver.url() })
    const u = await client.patch(`/v1/webhooks/${r.body.id}`, a.live, { url: 'mailto:x@y.z' })
    expect(u.status).toBe(400)
    expect(u.body.error).toMatchObject({ code: 'invalid_body', param: 'url' })
    const creds = await client.patch(`/v1/webhooks/${r.body.id}`, a.live, {
      url: 'https://u:50%off@example.com/',
    })
    expect(creds.body.error).toMatchObject({ code: 'invalid_body', param: 'url' })
    const e = await client.patch(`/v1/webhooks/${r.body.id}`, a.live, { events: ['*', 'nope'] })
    expect(e.body.error).toMatchObject({ code: 'invalid_body', param: 'events.1' })
    for (const [q, param] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['cursor=bm9wZQ', 'cursor'],
    ]) {
      const res = await client.get(`/v1/webhooks/${r.body.id}/deliveries?${q}`, a.live)
      expect(res.status).toBe(400)
      expect(res.body.error).toMatchObject({ code: 'invalid_query', param })
    }
  })
})
