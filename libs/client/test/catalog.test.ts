import { ROUTES } from '@mailer/contracts'
import { documentedOperations } from '@mailer/openapi'
import { describe, expect, it } from 'vitest'
import { ENDPOINTS, KEYED_OPERATIONS, type Operation, PENDING_ENDPOINTS } from '../src/endpoints.js'
import { Scope } from '../src/scope.js'
import { HttpTransport } from '../src/transport.js'

const key = (method: string, path: string) => `${method} ${path}`
const ops = Object.entries(ENDPOINTS) as [Operation, readonly [string, string]][]
const byRoute = new Map(ops.map(([op, [m, p]]) => [key(m, p), op]))
const catalog = new Map(ROUTES.map((r) => [key(r.method, r.path), r]))

describe('the SDK against the route catalog', () => {
  it('has an operation for every catalog route', () => {
    const missing = [...catalog.keys()].filter((k) => !byRoute.has(k))
    expect(missing).toEqual([])
  })

  it('calls only served routes, or documented ones listed as pending', () => {
    const stray = ops
      .filter(([op, [m, p]]) => !catalog.has(key(m, p)) && !PENDING_ENDPOINTS.includes(op))
      .map(([op]) => op)
    expect(stray).toEqual([])
  })

  it('puts admin routes under admin.* and project routes on the project resources', () => {
    for (const r of ROUTES) {
      const op = byRoute.get(key(r.method, r.path))!
      expect(op.startsWith('admin.'), `${op} for ${r.path}`).toBe(r.auth === 'admin')
    }
  })

  it('counts a key as making a repeat safe exactly on the routes that read Idempotency-Key', () => {
    const keyed = ROUTES.filter((r) => r.headers?.includes('idempotency-key')).map(
      (r) => byRoute.get(key(r.method, r.path))!,
    )
    expect([...KEYED_OPERATIONS].sort()).toEqual(keyed.sort())
  })

  it('reaches every documented operation, the admin mirror included, with AdminClient.project(slug)', () => {
    const transport = new HttpTransport({ baseUrl: 'http://unused' })
    const mirror = new Scope(transport, ':slug')
    const reachable = new Set<string>()
    for (const [op, [m, p]] of ops) {
      reachable.add(key(m, p))
      const r = catalog.get(key(m, p))
      // The mirror is only where the catalog says so (never /v1/me or /v1/api-keys).
      if (r?.auth === 'project' && r.mirror)
        reachable.add(key(m, decodeURIComponent(mirror.path(op, paramsOf(p)))))
    }
    const documented = documentedOperations(ROUTES).filter((d) => d.auth === 'project' || d.auth === 'admin')
    expect(documented.filter((d) => !reachable.has(key(d.method, d.path)))).toEqual([])
  })
})

/** `{ id: ':id' }` for `/v1/emails/:id`, so the filled path keeps its placeholders. */
function paramsOf(path: string): Record<string, string> {
  return Object.fromEntries([...path.matchAll(/:([A-Za-z]+)/g)].map((m) => [m[1]!, `:${m[1]}`]))
}
