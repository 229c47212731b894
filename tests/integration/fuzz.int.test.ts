import { ERROR_CODES, ERROR_TYPE_BY_STATUS } from '@mailer/contracts'
import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import { sql, tableDigests } from '../support/db.js'
import { email, projectWithDomain } from '../support/emails.js'
import { checkProperty } from '../support/fuzz-check.js'
import { type Creds, frame, oddAuth, otherHeaders, validAuth } from '../support/fuzz-headers.js'
import { type FuzzResponse, send } from '../support/fuzz-http.js'
import { bodyFor, queryFor, weirdSegment } from '../support/fuzz-inputs.js'
import { type Served, servedRoutes } from '../support/fuzz-routes.js'
import { createProject } from '../support/http.js'
import { availableServices } from '../support/services.js'
import { useStack } from '../support/use-stack.js'

/**
 * Throws malformed bodies, query strings, ids and headers at every route the gateway serves (the
 * catalog, its admin mirror, the dashboard's copies and session routes, the public links, /health,
 * /openapi.json, paths it does not serve) and checks that each gets an answer, that the answer is
 * a contract error (never a 5xx, never a bare status), and that no row of any table changed.
 */
const { te, stack, client } = useStack(availableServices(), { testEnv: { WEBHOOK_ALLOW_PRIVATE: 'false' } })
let creds: Creds

beforeAll(async () => {
  const { live, test } = await createProject(client, 'fuzz')
  const origin = new URL(stack.gatewayUrl).origin
  const signin = await fetch(`${stack.gatewayUrl}/dashboard/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({ key: client.admin }),
  })
  if (signin.status !== 200) throw new Error(`dashboard sign-in: ${signin.status}`)
  const cookie = signin.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ')
  const { csrfToken } = (await signin.json()) as { csrfToken: string }
  creds = { live, test, admin: client.admin, cookie, csrf: csrfToken, origin }
}, 60_000)

/** Paths nothing serves, /metrics included (it is on METRICS_PORT, not here). */
const UNSERVED: Served[] = [
  '/metrics',
  '/',
  '/v1',
  '/v2/emails',
  '/v1/nope/:id',
  '/dashboard/api/v1/nope',
].map((path) => ({ method: 'GET', path, access: 'open' }))
/** Methods no route has: always 405 (with Allow) on a served path, 404 elsewhere. */
const ODD_METHODS = ['PUT', 'OPTIONS', 'TRACE', 'PROPFIND', 'HEAD']

/** `:slug` of the mirror is the fuzz project (mostly); every other parameter names nothing. */
function fillPath(r: Served, segments: string[], mirrorSlug: string): string {
  let i = 0
  const mirror = r.access === 'mirror' || (r.access === 'dashboard' && !r.def?.path.includes(':slug'))
  return r.path.replace(/:[a-zA-Z]+/g, (p) =>
    p === ':slug' && mirror ? mirrorSlug : segments[i++ % segments.length]!,
  )
}

function expectContractError(res: FuzzResponse, where: string): void {
  expect(String(res.headers['content-type']), where).toMatch(/^application\/json/)
  expect(res.headers['x-request-id'], where).toEqual(expect.any(String))
  const e = res.json?.error
  expect(Object.keys(res.json ?? {}), where).toEqual(['error'])
  expect(e, where).toEqual({
    type: expect.any(String),
    code: expect.any(String),
    message: expect.any(String),
    ...(e?.param !== undefined ? { param: expect.any(String) } : {}),
  })
  // The code is one of the contract's, with its own status, and the type follows the status.
  expect([(ERROR_CODES as Record<string, number>)[e.code], e.type], where).toEqual([
    res.status,
    (ERROR_TYPE_BY_STATUS as Record<number, string>)[res.status],
  ])
}

/** What the answer to one malformed request may be. */
function expectRefusal(r: Served, method: string, res: FuzzResponse, where: string): void {
  expect(res.status, where).toBeLessThan(500)
  if (method === 'HEAD') return // no body to read
  if (method !== r.method) {
    // 405 with Allow on a served path, else 404 (or what the framing or parser refused first).
    if (res.status === 405) expect(res.headers.allow, where).toEqual(expect.any(String))
    expectContractError(res, where)
    return
  }
  // A link whose token is not ours is the reader's 404 page, never an error (public-links.ts).
  if (r.access === 'public' && res.status === 404) return
  if (res.status >= 400) {
    expectContractError(res, where)
    return
  }
  if (r.access === 'public') throw new Error(`a token that is none was taken: ${where}`)
  expect(res.status, where).toBeGreaterThanOrEqual(200)
  expect(res.status, where).toBeLessThan(300)
  // Reads answer; a sign-out without a session is done; removing a suppression is idempotent
  // (200 `deleted: false`, docs/api.md); a batch answers each (malformed) item.
  const read = method === 'GET' || r.access === 'open'
  const signout = r.access === 'session' && method === 'DELETE'
  const noneDeleted = method === 'DELETE' && res.json?.deleted === false
  const itemsRejected =
    r.def?.subject === 'api.email.emails.send-batch' &&
    Array.isArray(res.json?.data) &&
    res.json.data.every((d: { error?: { code?: unknown } }) => typeof d.error?.code === 'string')
  if (!read && !signout && !noneDeleted && !itemsRejected) throw new Error(`accepted: ${where}`)
}

const describeCase = (method: string, path: string, headers: object, body: string) =>
  `${method} ${path.slice(0, 300)} ${JSON.stringify(headers).slice(0, 400)} ${JSON.stringify(body.slice(0, 300))}`

describe('malformed input on every route', () => {
  it('always answers a contract error and changes nothing', async () => {
    const before = await tableDigests(te)
    // Named in a counterexample by method, path and access (not by their schemas).
    const routes = [...servedRoutes(), ...UNSERVED].map((r) =>
      Object.assign(r, { [fc.toStringMethod]: () => `${r.method} ${r.path} (${r.access})` }),
    )
    const cases = fc.constantFrom(...routes).chain((r) => {
      const withId = /:[a-zA-Z]+/.test(r.def?.path ?? r.path)
      return fc.record({
        r: fc.constant(r),
        method: fc.oneof({ weight: 9, arbitrary: fc.constant(r.method) }, fc.constantFrom(...ODD_METHODS)),
        segments: fc.array(weirdSegment, { minLength: 1, maxLength: 2 }),
        slug: fc.oneof({ weight: 5, arbitrary: fc.constant('fuzz') }, weirdSegment),
        query: queryFor(r.def),
        body: bodyFor(r.def, withId),
        auth: fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, oddAuth(creds)),
        other: otherHeaders,
      })
    })
    await checkProperty(
      fc.asyncProperty(cases, async ({ r, method, segments, slug, query, body, auth, other }) => {
        const path = fillPath(r, segments, slug) + (query ? `?${query}` : '')
        const withBody = method !== 'GET' && method !== 'HEAD'
        const bytes = withBody ? Buffer.from(body.text, 'utf8') : Buffer.alloc(0)
        const headers = frame({ ...other.headers, ...(auth ?? validAuth(r.access, creds)) }, bytes)
        // A refusal of broken framing carries a body, which a HEAD's client cannot read past.
        if (method === 'HEAD') for (const h of ['content-length', 'transfer-encoding']) delete headers[h]
        const where = describeCase(method, path, headers, withBody ? body.text : '')
        const res = await send(stack.gatewayUrl, {
          method,
          path,
          headers,
          ...(withBody ? { body: bytes, chunked: other.chunked } : {}),
        })
        expectRefusal(r, method, res, `${where} → ${res.status} ${res.text.slice(0, 300)}`)
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 1000), interruptAfterTimeLimit: 45_000 },
    )
    expect(await tableDigests(te)).toEqual(before)
  }, 120_000)

  it('junk X-Request-Id is echoed when usable, replaced when not, and never breaks a request', async () => {
    // interface.md: the caller's value is used; 1-200 printable ASCII characters (docs/api.md).
    const usable = (s: string) => s.length >= 1 && s.length <= 200 && /^[\x20-\x7e]*$/.test(s)
    const key = (await createProject(client, 'fuzz-rid')).live
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 300 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
          fc.constantFrom('../../etc/passwd', 'a'.repeat(201), 'req id with spaces', '{"json":1}', '%0d%0a'),
        ),
        async (rid) => {
          const res = await client.get('/v1/me', key, { 'x-request-id': rid })
          expect(res.status).toBe(200)
          const echoed = res.headers.get('x-request-id')!
          // HTTP drops a header value's surrounding spaces before the gateway sees it.
          if (usable(rid.trim())) expect(echoed).toBe(rid.trim())
          else expect(echoed).toMatch(/^req_[0-9a-f]{32}$/)
        },
      ),
      { numRuns: 150 },
    )
  })

  it('junk Idempotency-Key headers are accepted when 1-256 characters, else 400 with param idempotencyKey; twice is 400 and sends nothing', async () => {
    const p = await projectWithDomain(client, 'fuzz-idem')
    const printable = fc.string({ maxLength: 300 }).filter((s) => /^[\x20-\x7e]*$/.test(s))
    const emails = async () => (await sql(te, 'SELECT count(*)::int AS n FROM emails'))[0].n as number
    await checkProperty(
      fc.asyncProperty(
        fc.oneof(
          printable,
          fc.constantFrom('', ' ', 'k'.repeat(256), 'k'.repeat(257), '\\', '"quoted"', 'a:0', 'null'),
          // Two lines (the same key twice, too): Node joins them as "a, a", which was taken as the key.
          fc.array(fc.oneof(printable, fc.constantFrom('k1', 'k1')), { minLength: 2, maxLength: 3 }),
        ),
        fc.boolean(),
        async (key, batch) => {
          const before = Array.isArray(key) ? await emails() : 0
          const body = batch ? [email(p.from)] : email(p.from)
          const res = await send(stack.gatewayUrl, {
            method: 'POST',
            path: batch ? '/v1/emails/batch' : '/v1/emails',
            headers: {
              authorization: `Bearer ${p.test}`,
              'content-type': 'application/json',
              'idempotency-key': key,
            },
            body: Buffer.from(JSON.stringify(body)),
          })
          const k = typeof key === 'string' ? key.trim() : ''
          if (k.length >= 1 && k.length <= 256) {
            expect(res.status).toBe(200)
            expect(batch ? res.json.data[0].status : res.json.status).toBe('test')
          } else {
            expect(res.status, `${JSON.stringify(key)} → ${res.text}`).toBe(400)
            expect(res.json.error).toEqual(
              expect.objectContaining({ code: 'invalid_body', param: 'idempotencyKey' }),
            )
            if (Array.isArray(key)) expect(await emails()).toBe(before)
          }
        },
      ),
      { numRuns: 150 },
    )
  })

  it('bad Authorization headers are 401 contract errors', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 80 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
        async (h) => {
          const res = await client.call('GET', '/v1/me', { headers: { authorization: h } })
          expect(res.status).toBe(401)
          expect(['missing_api_key', 'invalid_api_key']).toContain(res.body.error.code)
        },
      ),
      { numRuns: 200 },
    )
  })
})
