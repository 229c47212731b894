import { ROUTES } from '@mailer/contracts'
import { useTestEnv } from '@mailer/testing'
import fc from 'fast-check'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { email, projectWithDomain } from '../support/emails.js'
import { api, createProject } from '../support/http.js'
import { availableServices } from '../support/services.js'
import { Stack } from '../support/stack.js'

/**
 * Throws malformed bodies, query strings, ids and headers at every route of the catalog (and its
 * admin mirror) and checks that each answer is a contract error — never a 500, never a hang — and
 * that no table changed.
 */
const te = useTestEnv({ WEBHOOK_ALLOW_PRIVATE: 'false' })
const stack = new Stack(te)
let client: ReturnType<typeof api>
let liveKey = ''

beforeAll(async () => {
  await stack.startAll(availableServices())
  client = api(stack.gatewayUrl)
  liveKey = (await createProject(client, 'fuzz')).live
}, 60_000)
afterAll(() => stack.stopAll())

async function tableCounts(): Promise<Record<string, number>> {
  const url = new URL(te.databaseUrl)
  const schema = url.searchParams.get('schema')!
  url.searchParams.delete('schema')
  const c = new pg.Client({ connectionString: url.toString() })
  await c.connect()
  try {
    const { rows } = await c.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name NOT IN ('_prisma_migrations')`,
      [schema],
    )
    const out: Record<string, number> = {}
    for (const { table_name } of rows) {
      const r = await c.query(`SELECT count(*)::int AS n FROM "${schema}"."${table_name}"`)
      out[table_name] = r.rows[0].n
    }
    return out
  } finally {
    await c.end()
  }
}

/** JSON values that no schema accepts: wrong top-level types and objects of unknown keys. */
const badJson = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.double(),
  fc.string(),
  fc.boolean(),
  fc.array(fc.oneof(fc.integer(), fc.string(), fc.constant(null)), { maxLength: 3 }),
  fc.dictionary(
    fc.string({ minLength: 1, maxLength: 8 }).map((k) => `zz_${k}`),
    fc.jsonValue({ maxDepth: 2 }),
    { minKeys: 1, maxKeys: 4 },
  ),
)
const notJson = fc.oneof(
  fc.constant('{'),
  fc.constant('{"a":'),
  fc.string({ minLength: 1 }).map((s) => `{${s}`),
  fc.constant('\u0000\u0001'),
)
const weirdId = fc.oneof(
  fc.string({ minLength: 1, maxLength: 40 }),
  fc.constant(`email_${'Z'.repeat(26)}`),
  fc.constant('..'),
  fc.constant('%00'),
)
const weirdQuery = fc.dictionary(
  fc.constantFrom(
    'limit',
    'cursor',
    'status',
    'since',
    'until',
    'range',
    'interval',
    'project',
    'type',
    'tag',
    'refresh',
    'dryRun',
    'q',
  ),
  fc.oneof(
    fc.string({ maxLength: 20 }),
    fc.constantFrom('-1', '0', '101', '1e9', 'NaN', '2026-13-45', 'null'),
  ),
  { maxKeys: 3 },
)

function fill(path: string, id: string, slug: string): string {
  return path.replace(':slug', encodeURIComponent(slug)).replace(/:[a-zA-Z]+/g, () => encodeURIComponent(id))
}

describe('malformed input on every route', () => {
  it('always answers a contract error and changes nothing', async () => {
    const before = await tableCounts()
    const routes = ROUTES.flatMap((r) => {
      const key = r.auth === 'admin' ? client.admin : liveKey
      const variants = [{ r, path: r.path, key }]
      if (r.mirror)
        variants.push({ r, path: `/v1/admin/projects/:slug${r.path.slice(3)}`, key: client.admin })
      return variants
    })
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.oneof(
          badJson.map((b) => ({ raw: JSON.stringify(b) })),
          notJson.map((raw) => ({ raw })),
        ),
        weirdId,
        weirdQuery,
        fc.constantFrom('fuzz', 'no-such-project', 'UPPER', ''),
        async ({ r, path, key }, body, id, query, slug) => {
          const qs = new URLSearchParams(query as Record<string, string>).toString()
          const url = fill(path, id, slug || 'x') + (qs ? `?${qs}` : '')
          const withBody = r.method !== 'GET' && r.method !== 'DELETE'
          const res = await client.call(r.method, url, { key, ...(withBody ? { rawBody: body.raw } : {}) })
          // A batch answers 200 with one result or error per item: malformed items are rejected there.
          const itemsRejected =
            r.subject === 'api.email.emails.send-batch' &&
            res.status === 200 &&
            Array.isArray(res.body?.data) &&
            res.body.data.length > 0 &&
            res.body.data.every((d: { error?: { code?: unknown } }) => typeof d.error?.code === 'string')
          if (res.status >= 500 || (res.status >= 200 && res.status < 300 && withBody && !itemsRejected)) {
            throw new Error(
              `${r.method} ${url} ${JSON.stringify(body.raw).slice(0, 200)} → ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`,
            )
          }
          if (res.status >= 400) {
            expect(res.body.error).toEqual(
              expect.objectContaining({
                type: expect.any(String),
                code: expect.any(String),
                message: expect.any(String),
              }),
            )
          }
        },
      ),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 600), interruptAfterTimeLimit: 60_000 },
    )
    expect(await tableCounts()).toEqual(before)
  }, 120_000)

  it('junk X-Request-Id is echoed when sane, replaced when not, and never breaks a request', async () => {
    const safe = /^[\w.:@/+=-]{1,200}$/
    // A project of its own: the first test may have disabled 'fuzz' through the admin routes.
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
          if (safe.test(rid.trim())) expect(echoed).toBe(rid.trim())
          else expect(echoed).toMatch(/^req_[0-9a-f]{32}$/)
        },
      ),
      { numRuns: 150 },
    )
  })

  it('junk Idempotency-Key headers are accepted when 1-256 characters, else 400 with param idempotencyKey', async () => {
    const p = await projectWithDomain(client, 'fuzz-idem')
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 300 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
          fc.constantFrom('', ' ', 'k'.repeat(256), 'k'.repeat(257), '\\', '"quoted"', 'a:0', 'null'),
        ),
        async (key) => {
          const res = await client.post('/v1/emails', p.test, email(p.from), { 'idempotency-key': key })
          const k = key.trim()
          if (k.length >= 1 && k.length <= 256) {
            expect(res.status).toBe(200)
            expect(res.body.status).toBe('test')
          } else {
            expect(res.status).toBe(400)
            expect(res.body.error).toEqual(
              expect.objectContaining({ code: 'invalid_body', param: 'idempotencyKey' }),
            )
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
