import { ROUTES } from '@mailer/contracts'
import { type DocumentedOperation, documentedOperations, toOpenApiPath } from '@mailer/openapi'
import { beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_KEY } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'

// Only auth and the gateway: a documented route whose service is not running still answers
// (401/403/404 project_not_found/503), and only a route the gateway does not serve is
// 404 route_not_found or 405 method_not_allowed.
const { client } = useStack(['auth', 'gateway'])
let doc: any
let projectKey: string

beforeAll(async () => {
  await client.post('/v1/admin/projects', ADMIN_KEY, { slug: 'docs', name: 'Docs' })
  projectKey = (await client.post('/v1/admin/projects/docs/api-keys', ADMIN_KEY, { name: 'k', mode: 'test' }))
    .body.key
  const r = await client.get('/openapi.json', projectKey)
  expect(r.status).toBe(200)
  doc = r.body
})

const concrete = (path: string) => path.replace(':slug', 'docs').replace(/:([A-Za-z]+)/g, 'x')

async function call(op: DocumentedOperation) {
  const key = op.auth === 'admin' ? ADMIN_KEY : op.auth === 'none' ? null : projectKey
  return client.call(op.method, concrete(op.path), {
    key,
    ...(op.method === 'GET' || op.method === 'DELETE' ? {} : { body: {} }),
  })
}

describe('GET /openapi.json', () => {
  it('is served to any working key, as OpenAPI 3.1 with both bearer schemes', async () => {
    expect(doc.openapi).toBe('3.1.0')
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['adminKey', 'projectKey'])
    expect((await client.get('/openapi.json', ADMIN_KEY)).body).toEqual(doc)
  })

  it('needs a key, as every request but /health and the public links (interface.md part 5)', async () => {
    const none = await client.get('/openapi.json')
    expect(none.status).toBe(401)
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/)
    expect(none.body.error).toMatchObject({ type: 'authentication_error', code: 'missing_api_key' })
    const wrong = await client.get('/openapi.json', `fs_test_${'x'.repeat(32)}`)
    expect(wrong.status).toBe(401)
    expect(wrong.body.error.code).toBe('invalid_api_key')
  })

  it('documents every route the gateway serves: the catalog, its admin mirror, /health, itself and the public links', () => {
    const documented = new Set(
      Object.entries(doc.paths as Record<string, object>).flatMap(([p, item]) =>
        Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`),
      ),
    )
    const served = documentedOperations(ROUTES).map((o) => `${o.method} ${toOpenApiPath(o.path)}`)
    expect(served.filter((s) => !documented.has(s))).toEqual([])
    expect([...documented].filter((d) => !served.includes(d))).toEqual([])
    for (const r of ROUTES.filter((x) => x.mirror)) {
      expect(
        documented.has(`${r.method} ${toOpenApiPath(`/v1/admin/projects/:slug${r.path.slice(3)}`)}`),
        r.path,
      ).toBe(true)
    }
  })

  it('every documented path is served with its method (never route_not_found or method_not_allowed)', async () => {
    const unserved: string[] = []
    for (const op of documentedOperations(ROUTES)) {
      const r = await call(op)
      const code = r.body?.error?.code
      if (r.status === 405 || code === 'route_not_found' || code === 'method_not_allowed')
        unserved.push(`${op.method} ${op.path}: ${r.status} ${code}`)
    }
    expect(unserved).toEqual([])
  })

  it('and an undocumented path or method is not', async () => {
    expect((await client.get('/v1/nothing-here', ADMIN_KEY)).body.error.code).toBe('route_not_found')
    expect((await client.call('PUT', '/openapi.json')).status).toBe(405)
  })

  it('describes the request and answer shapes callers rely on', () => {
    const send = doc.paths['/v1/emails'].post
    expect(send.security).toEqual([{ projectKey: [] }])
    expect(send.parameters.map((p: any) => p.name)).toContain('idempotency-key')
    expect(send.requestBody.content['application/json'].schema.properties).toHaveProperty('to')
    const list = doc.paths['/v1/emails'].get.responses['200'].content['application/json'].schema
    expect(Object.keys(list.properties).sort()).toEqual(['data', 'nextCursor'])
    const mirror = doc.paths['/v1/admin/projects/{slug}/emails'].post
    expect(mirror.security).toEqual([{ adminKey: [] }])
    expect(doc.paths['/v1/admin/projects'].post.responses['201']).toBeDefined()
  })
})
