import { beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../support/db.js'
import { email, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'
import { metricValue } from '../support/webhooks.js'

const { te, stack, client } = useStack(['auth', 'email', 'gateway'])
let acme: Awaited<ReturnType<typeof projectWithDomain>>
let beta: Awaited<ReturnType<typeof projectWithDomain>>
const ids: Record<string, string> = {}

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
  beta = await projectWithDomain(client, 'beta')
  const send = async (name: string, over: Record<string, unknown>, key = acme.live) => {
    const r = await client.post('/v1/emails', key, email(acme.from, over))
    if (!r.body.id) throw new Error(JSON.stringify(r.body))
    ids[name] = r.body.id
  }
  await send('welcome', { to: 'ann@x.test', subject: 'Welcome aboard', tags: { kind: 'welcome' } })
  await send('invoice', {
    to: 'bob@x.test',
    cc: 'ann@x.test',
    subject: 'Your invoice 100%',
    tags: { kind: 'invoice' },
  })
  await send('reset', {
    to: 'cy@x.test',
    cc: 'cy+alerts@x.test',
    subject: 'Password reset',
    from: `Other <other@${acme.domain}>`,
    tags: { 'utm:source': 'news:2026' },
  })
  await send('test', { to: 'dee@x.test', subject: 'A test' }, acme.test)
  await send('canceled', { to: 'eve@x.test', subject: 'Never mind' })
  await client.del(`/v1/emails/${ids.canceled}`, acme.live)
  await client.post('/v1/emails', beta.live, email(beta.from, { subject: 'Beta only' }))
})

const list = async (query = '', key = acme.live) => client.get(`/v1/emails${query}`, key)
const listIds = async (query = '') => (await list(query)).body.data.map((e: any) => e.id)

describe('GET /v1/emails', () => {
  it("lists the project's emails newest first, without other projects' emails", async () => {
    const r = await list()
    expect(r.status).toBe(200)
    expect(r.body.nextCursor).toBeNull()
    expect(r.body.data.map((e: any) => e.id)).toEqual([
      ids.canceled,
      ids.test,
      ids.reset,
      ids.invoice,
      ids.welcome,
    ])
    expect(r.body.data[0]).toMatchObject({ status: 'canceled', subject: 'Never mind', to: ['eve@x.test'] })
    expect(r.body.data[0].events).toBeUndefined()
  })

  it('pages with limit and an opaque cursor until nextCursor is null', async () => {
    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const r = await list(`?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
      expect(r.body.data.length).toBeLessThanOrEqual(2)
      seen.push(...r.body.data.map((e: any) => e.id))
      cursor = r.body.nextCursor
      pages++
    } while (cursor)
    expect(pages).toBe(3)
    expect(seen).toEqual([ids.canceled, ids.test, ids.reset, ids.invoice, ids.welcome])
  })

  it('filters by status, to (any recipient kind), from, q, tag, since and until', async () => {
    expect(await listIds('?status=canceled')).toEqual([ids.canceled])
    expect(await listIds('?status=test')).toEqual([ids.test])
    expect(await listIds('?to=ANN@x.test')).toEqual([ids.invoice, ids.welcome])
    expect(await listIds(`?from=other@${acme.domain}`)).toEqual([ids.reset])
    // A plus address typed into the URL unencoded: decoded, its `+` is a space, which no address has.
    expect(await listIds('?to=cy+alerts@x.test')).toEqual([ids.reset])
    expect(await listIds('?to=cy%2Balerts@x.test')).toEqual([ids.reset])
    expect(await listIds(`?from=other+x@${acme.domain}`)).toEqual([])
    expect(await listIds('?q=INVOICE')).toEqual([ids.invoice])
    expect(await listIds('?q=100%25')).toEqual([ids.invoice])
    expect(await listIds('?q=_')).toEqual([])
    expect(await listIds('?q=%25')).toEqual([ids.invoice])
    // A cleared search box, or a pasted term with spaces around it.
    expect(await listIds('?q=')).toEqual(await listIds(''))
    expect(await listIds('?q=%20%20')).toEqual(await listIds(''))
    expect(await listIds('?q=%20invoice%0A')).toEqual([ids.invoice])
    expect(await listIds('?tag=kind:welcome')).toEqual([ids.welcome])
    // A tag key may hold a colon: split at the first one only, this tag could never be found.
    expect(await listIds('?tag=utm:source:news:2026')).toEqual([ids.reset])
    expect(await listIds('?tag=utm:source:news')).toEqual([])
    const created = (await sql(te, 'SELECT created_at FROM emails WHERE id = $1', [ids.reset]))[0]
      .created_at as Date
    const at = encodeURIComponent(created.toISOString())
    expect(await listIds(`?since=${at}`)).toEqual([ids.canceled, ids.test, ids.reset])
    expect(await listIds(`?until=${at}`)).toEqual([ids.invoice, ids.welcome])
    // The same instant with a `+00:00` offset typed into the URL unencoded: decoded, its `+` is a space.
    const plus = created.toISOString().replace('Z', '+00:00')
    expect(await listIds(`?since=${plus}`)).toEqual([ids.canceled, ids.test, ids.reset])
    expect(await listIds(`?until=${plus}`)).toEqual([ids.invoice, ids.welcome])
  })

  it('a bad query parameter is 400 invalid_query naming it', async () => {
    for (const [query, param] of [
      ['?limit=0', 'limit'],
      ['?limit=101', 'limit'],
      ['?status=lost', 'status'],
      ['?tag=nocolon', 'tag'],
      ['?since=2024-01-01T00:00:00', 'since'],
      ['?cursor=garbage', 'cursor'],
      ['?to=not-an-address', 'to'],
    ]) {
      const r = await list(query)
      expect(r.status, query).toBe(400)
      expect(r.body.error, query).toMatchObject({ type: 'validation_error', code: 'invalid_query', param })
    }
  })

  it('the admin mirror lists the same data', async () => {
    const r = await client.get('/v1/admin/projects/acme/emails?limit=1', client.admin)
    expect(r.body.data.map((e: any) => e.id)).toEqual([ids.canceled])
  })
})

describe('GET /v1/emails/:id/content', () => {
  it('answers the content until its retention passes, then 404 content_expired', async () => {
    const ok = await client.get(`/v1/emails/${ids.welcome}/content`, acme.live)
    expect(ok.body).toEqual({ html: '<p>Hello <b>there</b></p>', text: null, headers: {}, attachments: [] })
    await sql(te, "UPDATE email_contents SET expires_at = now() - interval '1 day' WHERE email_id = $1", [
      ids.welcome,
    ])
    const gone = await client.get(`/v1/emails/${ids.welcome}/content`, acme.live)
    expect(gone.status).toBe(404)
    expect(gone.body.error).toMatchObject({ type: 'not_found', code: 'content_expired' })
    // The email itself is still there.
    expect((await client.get(`/v1/emails/${ids.welcome}`, acme.live)).status).toBe(200)
  })

  it("another project's email, or an unknown id, is 404 email_not_found", async () => {
    const r = await client.get(`/v1/emails/${ids.invoice}/content`, beta.live)
    expect(r.status).toBe(404)
    expect(r.body.error.code).toBe('email_not_found')
    expect(
      (await client.get('/v1/emails/email_01ARZ3NDEKTSV4RRFFQ69G5FAV/content', acme.live)).body.error.code,
    ).toBe('email_not_found')
  })
})

describe('metrics', () => {
  it('counts accepted and rejected sends by source, mode and code', async () => {
    await client.post('/v1/emails', acme.live, email('x@elsewhere.test'))
    const port = stack.metricsPort('email')
    // four live sends of acme's and one of beta's, all through this one replica
    expect(await metricValue(port, 'mailer_email_accepted_total', 'source="http",mode="live"')).toBe(5)
    expect(await metricValue(port, 'mailer_email_accepted_total', 'source="http",mode="test"')).toBe(1)
    expect(
      await metricValue(port, 'mailer_email_rejected_total', 'source="http",code="invalid_sender"'),
    ).toBe(1)
  })
})

// After the metrics test, which counts this file's sends up to it.
describe('GET /v1/emails?tag=', () => {
  it('finds a tag value with line breaks, as the send stored it', async () => {
    // A send takes any characters in a tag; the filter took one line only and answered 400.
    const tags = { note: 'line one\nline two', para: 'a\u2028b' }
    const sent = await client.post('/v1/emails', beta.live, email(beta.from, { tags }))
    expect(sent.status).toBe(202)
    for (const [key, value] of Object.entries(tags)) {
      const r = await list(`?tag=${encodeURIComponent(`${key}:${value}`)}`, beta.live)
      expect([r.status, r.body.data?.map((e: any) => e.id)], key).toEqual([200, [sent.body.id]])
    }
  })
})
