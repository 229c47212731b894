import { beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { ADMIN_KEY } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'

// The document's schemas against what the running API really answers: a client generated from
// GET /openapi.json must accept every real answer, and send bodies the API accepts.
const { client } = useStack(['auth', 'email', 'webhook', 'broadcast', 'analytics', 'gateway'], {
  timeout: 120_000,
})
let doc: any

beforeAll(async () => {
  doc = (await client.get('/openapi.json', ADMIN_KEY)).body
}, 120_000)

/** A JSON Schema of the document as zod, its `#/components/schemas` references resolved. */
function schemaAt(schema: unknown): z.ZodType {
  const text = JSON.stringify(schema).replaceAll('"#/components/schemas/', '"#/$defs/')
  const defs = JSON.parse(
    JSON.stringify(doc.components.schemas ?? {}).replaceAll('"#/components/schemas/', '"#/$defs/'),
  )
  return z.fromJSONSchema({ ...JSON.parse(text), $defs: defs })
}

/** The documented answer schema for this status: the exact one, else `2XX`, else `default`. */
function responseSchema(method: string, path: string, status: number): z.ZodType {
  const op = doc.paths[path]?.[method.toLowerCase()]
  expect(op, `${method} ${path} is documented`).toBeDefined()
  const answer =
    op.responses[String(status)] ?? op.responses[`${String(status)[0]}XX`] ?? op.responses.default
  expect(answer, `${method} ${path} documents ${status}`).toBeDefined()
  return schemaAt(answer.content['application/json'].schema)
}

const checked: string[] = []

/** Calls a route and checks its answer against the document. `path` is the document's template. */
async function call(
  method: string,
  path: string,
  opts: { key: string | null; params?: Record<string, string>; query?: string; body?: unknown },
) {
  const concrete = path.replace(/\{(\w+)\}/g, (_, n: string) => encodeURIComponent(opts.params?.[n] ?? ''))
  const r = await client.call(method, concrete + (opts.query ? `?${opts.query}` : ''), {
    key: opts.key,
    ...(opts.body !== undefined ? { body: opts.body } : {}),
  })
  const parsed = responseSchema(method, path, r.status).safeParse(r.body)
  expect(
    parsed.error?.issues,
    `${method} ${concrete} ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`,
  ).toBeUndefined()
  checked.push(`${method} ${path} ${r.status}`)
  return r
}

describe('GET /openapi.json against the real answers', () => {
  it('every sampled answer, success or error, fits the documented schema of its status', async () => {
    const admin = { key: ADMIN_KEY }
    await call('POST', '/v1/admin/projects', { ...admin, body: { slug: 'oa', name: 'OA' } })
    await call('GET', '/v1/admin/projects', admin)
    await call('PATCH', '/v1/admin/projects/{slug}', {
      ...admin,
      params: { slug: 'oa' },
      body: { dailyLimit: 0 },
    })
    await call('POST', '/v1/admin/projects/{slug}/domains/{domain}/setup', {
      ...admin,
      params: { slug: 'oa', domain: 'oa.test' },
    })
    const live = (
      await call('POST', '/v1/admin/projects/{slug}/api-keys', {
        ...admin,
        params: { slug: 'oa' },
        body: { name: 'live', mode: 'live' },
      })
    ).body
    const test = (
      await call('POST', '/v1/admin/projects/{slug}/api-keys', {
        ...admin,
        params: { slug: 'oa' },
        body: { name: 'test', mode: 'test', expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
      })
    ).body
    await call('GET', '/v1/admin/api-keys', { ...admin, query: 'project=oa' })
    const key = { key: live.key as string }
    await call('GET', '/v1/me', key)
    await call('GET', '/v1/me', { key: test.key })
    await call('GET', '/v1/api-keys', key)

    const send = { from: 'Oa <hello@oa.test>', to: 'ana@example.com', subject: 'Hi', html: '<p>Hi</p>' }
    const sent = (
      await call('POST', '/v1/emails', {
        ...key,
        body: { ...send, tags: { plan: 'pro' }, attachments: [{ filename: 'a.txt', content: 'aGk=' }] },
      })
    ).body
    await call('POST', '/v1/emails', { key: test.key, body: send })
    const later = (
      await call('POST', '/v1/emails', {
        ...key,
        body: { ...send, scheduledAt: new Date(Date.now() + 3_600_000).toISOString() },
      })
    ).body
    await call('PATCH', '/v1/emails/{id}', {
      ...key,
      params: { id: later.id },
      body: { scheduledAt: new Date(Date.now() + 7_200_000).toISOString() },
    })
    await call('DELETE', '/v1/emails/{id}', { ...key, params: { id: later.id } })
    await call('POST', '/v1/emails/batch', { ...key, body: [send, { ...send, to: 'not an address' }] })
    await call('GET', '/v1/emails', { ...key, query: 'limit=1' })
    await call('GET', '/v1/emails/{id}', { ...key, params: { id: sent.id } })
    await call('GET', '/v1/emails/{id}/content', { ...key, params: { id: sent.id } })
    await call('GET', '/v1/admin/emails', admin)
    await call('GET', '/v1/admin/projects/{slug}/emails/{id}', {
      ...admin,
      params: { slug: 'oa', id: sent.id },
    })
    await call('GET', '/v1/events', key)
    await call('GET', '/v1/admin/events', { ...admin, query: 'project=oa' })
    await call('GET', '/v1/analytics', key)
    await call('GET', '/v1/admin/stats', admin)
    await call('GET', '/v1/domains', key)
    await call('GET', '/v1/admin/domains', admin)
    await call('POST', '/v1/admin/suppressions', { ...admin, body: { address: 'gone@example.com' } })
    await call('GET', '/v1/admin/suppressions', admin)
    await call('DELETE', '/v1/admin/suppressions/{address}', {
      ...admin,
      params: { address: 'gone@example.com' },
    })

    const hook = (
      await call('POST', '/v1/webhooks', { ...key, body: { url: 'https://hooks.example.com/in' } })
    ).body
    await call('GET', '/v1/webhooks', key)
    await call('PATCH', '/v1/webhooks/{id}', { ...key, params: { id: hook.id }, body: { enabled: false } })
    await call('GET', '/v1/webhooks/{id}/deliveries', { ...key, params: { id: hook.id } })
    await call('POST', '/v1/templates', {
      ...key,
      body: { name: 'welcome', subject: 'Hi {{name}}', html: '<p>{{name}}</p>' },
    })
    await call('GET', '/v1/templates/{name}', { ...key, params: { name: 'welcome' } })
    await call('POST', '/v1/templates/{name}/render', {
      ...key,
      params: { name: 'welcome' },
      body: { data: { name: 'Ana' } },
    })
    const contact = (await call('POST', '/v1/contacts', { ...key, body: { email: 'c@example.com' } })).body
    await call('GET', '/v1/contacts/{id}', { ...key, params: { id: contact.id } })
    await call('POST', '/v1/audiences', { ...key, body: { name: 'All' } })
    await call('GET', '/v1/broadcasts', key)

    // Errors: the document's 401 and default answers.
    await call('GET', '/v1/me', { key: null })
    await call('GET', '/v1/emails/{id}', { ...key, params: { id: 'email_01ARZ3NDEKTSV4RRFFQ69G5FAV' } })
    await call('GET', '/v1/emails', { ...key, query: 'limit=0' })
    await call('POST', '/v1/webhooks/{id}/test', { ...key, params: { id: hook.id } })
    await call('GET', '/v1/admin/projects/{slug}', { ...admin, params: { slug: 'nope' } })

    expect(checked.filter((c) => / [45]\d\d$/.test(c))).toHaveLength(5)
    // And the check bites: an answer without the documented fields does not fit.
    expect(responseSchema('GET', '/v1/me', 200).safeParse({ project: {} }).success).toBe(false)
  })

  it('takes one address as a string, as the API does (README: "to":"you@example.org")', () => {
    const send = schemaAt(doc.paths['/v1/emails'].post.requestBody.content['application/json'].schema)
    const readme = {
      from: 'Demo <hello@example.com>',
      to: 'you@example.org',
      subject: 'Hello',
      html: '<p>It works</p>',
    }
    expect(send.safeParse(readme).error?.issues).toBeUndefined()
    expect(
      send.safeParse({ ...readme, to: ['a@example.org'], cc: 'b@example.org', replyTo: 'R <r@example.com>' })
        .success,
    ).toBe(true)
    expect(send.safeParse({ ...readme, to: [] }).success).toBe(false)
  })

  it('describes each batch item as a send input, so a generated client can build one', () => {
    const batch = doc.paths['/v1/emails/batch'].post.requestBody.content['application/json'].schema
    const single = doc.paths['/v1/emails'].post.requestBody.content['application/json'].schema
    expect(batch).toMatchObject({ type: 'array', minItems: 1, maxItems: 100 })
    expect(batch.items).toEqual(single)
    const items = schemaAt(batch)
    expect(items.safeParse([{ to: 'ana@example.com', subject: 'Hi', text: 'x' }]).success).toBe(true)
    // The API refuses an unknown field (a typo); so does the document.
    expect(
      items.safeParse([{ to: 'ana@example.com', subject: 'Hi', text: 'x', reply_to: 'x' }]).success,
    ).toBe(false)
    const mirror = doc.paths['/v1/admin/projects/{slug}/emails/batch'].post.requestBody
    expect(mirror.content['application/json'].schema.items).toEqual(single)
  })
})
