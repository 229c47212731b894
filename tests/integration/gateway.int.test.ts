import { describe, expect, it } from 'vitest'
import { api, createProject } from '../support/http.js'
import { Stack } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'

const { te, stack, client } = useStack(['auth', 'gateway'], { env: { MAX_BODY_BYTES: '2048' } })

describe('gateway limits and health', () => {
  it('a body over MAX_BODY_BYTES is 413 payload_too_large', async () => {
    const r = await client.post('/v1/admin/projects', client.admin, { slug: 'big', name: 'x'.repeat(5000) })
    expect(r.status).toBe(413)
    expect(r.body.error).toMatchObject({ type: 'validation_error', code: 'payload_too_large' })
  })

  it('parses a JSON body sent without a Content-Type', async () => {
    const r = await client.call('POST', '/v1/admin/projects', {
      key: client.admin,
      rawBody: JSON.stringify({ slug: 'noct', name: 'No CT' }),
    })
    expect(r.status).toBe(201)
  })

  it('/health answers 503 { ok: false } when the database is down', async () => {
    const broken = new Stack(te, { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' })
    await broken.start('gateway')
    try {
      const r = await api(broken.gatewayUrl).get('/health')
      expect(r.status).toBe(503)
      expect(r.body).toEqual({ ok: false })
    } finally {
      await broken.stopAll()
    }
  })

  it('exposes request metrics by route pattern, never by raw URL', async () => {
    await client.get('/v1/admin/projects/some-slug', client.admin)
    const text = await (await fetch(`http://127.0.0.1:${stack.metricsPort('gateway')}/metrics`)).text()
    expect(text).toMatch(
      /mailer_gateway_http_requests_total\{route="\/v1\/admin\/projects\/:slug",method="GET",status="404"\} 1/,
    )
    expect(text).not.toContain('some-slug')
  })
})

describe('request conventions at the edges', () => {
  it('OPTIONS is a method like any other the path does not serve: 405 JSON with Allow, never text/plain', async () => {
    for (const [path, allow] of <[string, string][]>[
      ['/v1/emails', 'GET, HEAD, POST'],
      ['/v1/admin/projects/acme', 'DELETE, GET, HEAD, PATCH'],
      ['/health', 'GET, HEAD'],
      ['/u/some-token', 'GET, HEAD, POST'],
    ]) {
      const r = await client.call('OPTIONS', path)
      expect([r.status, r.headers.get('content-type'), r.body?.error?.code], path).toEqual([
        405,
        'application/json; charset=utf-8',
        'method_not_allowed',
      ])
      expect(r.headers.get('allow'), path).toBe(allow)
      expect(r.headers.get('x-request-id'), path).toMatch(/^req_/)
    }
    const put = await client.call('PUT', '/v1/emails/email_x', { key: client.admin })
    expect([put.status, put.headers.get('allow')]).toEqual([405, 'DELETE, GET, HEAD, PATCH'])
    const unknown = await client.call('OPTIONS', '/v1/nope')
    expect([unknown.status, unknown.body.error.code, unknown.headers.get('allow')]).toEqual([
      404,
      'route_not_found',
      null,
    ])
  })

  it('a path segment that is not valid percent-encoding is taken literally, never a body error', async () => {
    const p = await createProject(client, 'pct')
    // The id or slug is one no resource has: the route's own 404, after authentication as always.
    const key = await client.del('/v1/admin/api-keys/%FF', client.admin)
    expect([key.status, key.body.error?.code, key.body.error?.param]).toEqual([
      404,
      'api_key_not_found',
      'id',
    ])
    // Not an id's form: not quoted back (tests/integration/not-found.int.test.ts).
    expect(key.body.error.message).toBe('No API key with that id')
    const slug = await client.get('/v1/admin/projects/%E0%A4%A/emails', client.admin)
    expect([slug.status, slug.body.error?.code, slug.body.error?.param]).toEqual([
      404,
      'project_not_found',
      'slug',
    ])
    const project = await client.get('/v1/admin/projects/pct%', client.admin)
    expect([project.status, project.body.error?.code]).toEqual([404, 'project_not_found'])
    const noKey = await client.get('/v1/admin/projects/%FF')
    expect([noKey.status, noKey.body.error?.code]).toEqual([401, 'missing_api_key'])
    const route = await client.get('/v1/n%ZZope', p.live)
    expect([route.status, route.body.error?.code]).toEqual([404, 'route_not_found'])
    // A public link's token too: the "Link not found" page, never an error body.
    const link = await client.get('/t/c/%FF')
    expect([link.status, link.headers.get('content-type')?.split(';')[0]]).toEqual([404, 'text/html'])
    // Valid escapes are decoded as before.
    const ok = await client.get('/v1/admin/projects/p%63t', client.admin)
    expect([ok.status, ok.body.slug]).toEqual([200, 'pct'])
  })

  it('MAX_BODY_BYTES is the largest body taken: 2048 bytes are read, 2049 are 413', async () => {
    const body = (n: number) => {
      const base = JSON.stringify({ slug: `s${n}`, name: '' })
      return JSON.stringify({ slug: `s${n}`, name: 'x'.repeat(n - base.length) })
    }
    expect(Buffer.byteLength(body(2048))).toBe(2048)
    const at = await client.call('POST', '/v1/admin/projects', { key: client.admin, rawBody: body(2048) })
    // Read and checked by the route (the name is over 200 characters), not refused for its size.
    expect([at.status, at.body.error?.code, at.body.error?.param]).toEqual([400, 'invalid_body', 'name'])
    const over = await client.call('POST', '/v1/admin/projects', { key: client.admin, rawBody: body(2049) })
    expect([over.status, over.body.error?.code]).toEqual([413, 'payload_too_large'])
    expect(over.headers.get('x-request-id')).toMatch(/^req_/)
  })
})
