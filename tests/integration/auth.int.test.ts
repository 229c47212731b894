import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { sql as sqlIn } from '../support/db.js'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'

const { te, stack, client } = useStack(['auth', 'gateway'])

const sql = (text: string, params: unknown[] = []) => sqlIn(te, text, params)

describe('request conventions', () => {
  it('answers /health without a key after one database query', async () => {
    const r = await client.get('/health')
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ ok: true })
  })

  it('echoes X-Request-Id, or makes one', async () => {
    const mine = await client.get('/health', null, { 'x-request-id': 'abc-123' })
    expect(mine.headers.get('x-request-id')).toBe('abc-123')
    // The caller's value is used (interface.md), spaces and punctuation inside included, on
    // errors too; only one no log line or NATS header can carry as given is replaced.
    for (const rid of ['job 7 "nightly" #3', 'trace=a,b;c', '{"id":1}', 'x'.repeat(200)]) {
      const r = await client.get('/v1/me', null, { 'x-request-id': rid })
      expect([r.status, r.headers.get('x-request-id')], rid).toEqual([401, rid])
    }
    for (const rid of ['x'.repeat(201), 'caf\u00e9']) {
      const r = await client.get('/health', null, { 'x-request-id': rid })
      expect(r.headers.get('x-request-id'), rid).toMatch(/^req_[0-9a-f]{32}$/)
    }
    const made = await client.get('/health')
    expect(made.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/)
  })

  it('404 route_not_found and 405 method_not_allowed in the contract shape', async () => {
    const nf = await client.get('/v1/nope', client.admin)
    expect(nf.status).toBe(404)
    expect(nf.body.error).toMatchObject({ type: 'not_found', code: 'route_not_found' })
    const na = await client.call('PUT', '/v1/admin/projects')
    expect(na.status).toBe(405)
    expect(na.body.error).toMatchObject({ type: 'validation_error', code: 'method_not_allowed' })
  })

  it('invalid JSON is 400 invalid_body; no body is 400 missing_body', async () => {
    const bad = await client.call('POST', '/v1/admin/projects', {
      key: client.admin,
      rawBody: '{nope',
      headers: { 'content-type': 'application/json' },
    })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toMatchObject({ type: 'validation_error', code: 'invalid_body' })
    const none = await client.call('POST', '/v1/admin/projects', { key: client.admin })
    expect(none.status).toBe(400)
    expect(none.body.error.code).toBe('missing_body')
  })

  it('a field failing its schema is invalid_body with the dotted param', async () => {
    const r = await client.post('/v1/admin/projects', client.admin, { slug: 'Bad Slug', name: 'x' })
    expect(r.status).toBe(400)
    expect(r.body.error).toMatchObject({ code: 'invalid_body', param: 'slug' })
  })
})

describe('admin projects', () => {
  it('creates, lists, retrieves, updates and disables projects', async () => {
    const c = await client.post('/v1/admin/projects', client.admin, {
      slug: 'acme',
      name: 'Acme',
      defaultFrom: 'hi@acme.test',
    })
    expect(c.status).toBe(201)
    expect(c.body).toMatchObject({
      slug: 'acme',
      name: 'Acme',
      dailyLimit: 5000,
      rpcEnabled: true,
      disabled: false,
      defaultFrom: 'hi@acme.test',
    })
    expect(c.body.id).toMatch(/^proj_[0-9A-Z]{26}$/)

    const dup = await client.post('/v1/admin/projects', client.admin, { slug: 'acme', name: 'Again' })
    expect(dup.status).toBe(409)
    expect(dup.body.error).toMatchObject({ type: 'conflict', code: 'slug_taken', param: 'slug' })

    const list = await client.get('/v1/admin/projects', client.admin)
    expect(list.body.data.map((p: any) => p.slug)).toContain('acme')

    const got = await client.get('/v1/admin/projects/acme', client.admin)
    expect(got.body.id).toBe(c.body.id)

    const upd = await client.patch('/v1/admin/projects/acme', client.admin, {
      dailyLimit: 0,
      rpcEnabled: false,
      name: 'Acme Inc',
    })
    expect(upd.status).toBe(200)
    expect(upd.body).toMatchObject({ dailyLimit: 0, rpcEnabled: false, name: 'Acme Inc' })

    const off = await client.del('/v1/admin/projects/acme', client.admin)
    expect(off.body.disabled).toBe(true)

    const missing = await client.get('/v1/admin/projects/nope', client.admin)
    expect(missing.status).toBe(404)
    expect(missing.body.error.code).toBe('project_not_found')
  })
  it('a dailyLimit beyond what is stored is 400 invalid_body naming it, never 500', async () => {
    const big = await client.post('/v1/admin/projects', client.admin, {
      slug: 'big',
      name: 'Big',
      dailyLimit: 3_000_000_000,
    })
    expect([big.status, big.body.error?.code, big.body.error?.param]).toEqual([
      400,
      'invalid_body',
      'dailyLimit',
    ])
    const max = await client.post('/v1/admin/projects', client.admin, {
      slug: 'big',
      name: 'Big',
      dailyLimit: 2_147_483_647,
    })
    expect(max.status).toBe(201)
    const upd = await client.patch('/v1/admin/projects/big', client.admin, { dailyLimit: 1e12 })
    expect([upd.status, upd.body.error?.code, upd.body.error?.param]).toEqual([
      400,
      'invalid_body',
      'dailyLimit',
    ])
  })
  it('a defaultFrom that no send could use is 400 invalid_body naming it', async () => {
    for (const bad of ['garbage', 'a@b', 'Ann <nope>', 'x\r\n@b.test']) {
      const made = await client.post('/v1/admin/projects', client.admin, {
        slug: 'sender',
        name: 'S',
        defaultFrom: bad,
      })
      expect([made.status, made.body.error?.code, made.body.error?.param], bad).toEqual([
        400,
        'invalid_body',
        'defaultFrom',
      ])
    }
    const ok = await client.post('/v1/admin/projects', client.admin, {
      slug: 'sender',
      name: 'S',
      defaultFrom: 'Ann <ann@sender.test>',
    })
    expect(ok.body.defaultFrom).toBe('Ann <ann@sender.test>')
    const upd = await client.patch('/v1/admin/projects/sender', client.admin, { defaultFrom: 'garbage' })
    expect([upd.status, upd.body.error?.param]).toEqual([400, 'defaultFrom'])
    expect(
      (await client.patch('/v1/admin/projects/sender', client.admin, { defaultFrom: null })).status,
    ).toBe(200)
  })
})

describe('API keys', () => {
  it('returns the full key once and stores only its SHA-256 hash and prefix', async () => {
    await client.post('/v1/admin/projects', client.admin, { slug: 'keys', name: 'Keys' })
    const k = await client.post('/v1/admin/projects/keys/api-keys', client.admin, {
      name: 'ci',
      mode: 'live',
    })
    expect(k.status).toBe(201)
    expect(k.body.key).toMatch(/^fs_live_[A-Za-z0-9]{32}$/)
    expect(k.body.prefix).toBe(k.body.key.slice(0, 12))
    expect(k.body).toMatchObject({ name: 'ci', mode: 'live', revokedAt: null, lastUsedAt: null })

    const rows = await sql('SELECT * FROM api_keys WHERE id = $1', [k.body.id])
    expect(rows[0].hash).toBe(createHash('sha256').update(k.body.key).digest('hex'))
    expect(JSON.stringify(rows[0])).not.toContain(k.body.key)

    const listed = await client.get('/v1/admin/api-keys?project=keys', client.admin)
    expect(listed.body.data).toHaveLength(1)
    // Worded as the other admin lists' project parameter, not zod's pattern or type message.
    for (const [query, message] of [
      ['', 'project: project is required: the slug of the project whose keys to list'],
      ['?project=Keys', 'project: project must be a project slug'],
    ]) {
      const bad = await client.get(`/v1/admin/api-keys${query}`, client.admin)
      expect([bad.status, bad.body.error]).toEqual([
        400,
        { type: 'validation_error', code: 'invalid_query', message, param: 'project' },
      ])
    }
    expect(JSON.stringify(listed.body)).not.toContain(k.body.key)
    expect(listed.body.data[0].key).toBeUndefined()

    const own = await client.get('/v1/api-keys', k.body.key)
    expect(own.status).toBe(200)
    expect(own.body.data[0].id).toBe(k.body.id)
    expect(own.body.data[0].key).toBeUndefined()
  })

  it('validates key creation: name length, mode, expiresAt in the future with an offset', async () => {
    await client.post('/v1/admin/projects', client.admin, { slug: 'kv', name: 'KV' })
    const long = await client.post('/v1/admin/projects/kv/api-keys', client.admin, {
      name: 'x'.repeat(201),
      mode: 'live',
    })
    expect(long.body.error).toMatchObject({ code: 'invalid_body', param: 'name' })
    const mode = await client.post('/v1/admin/projects/kv/api-keys', client.admin, {
      name: 'a',
      mode: 'prod',
    })
    expect(mode.body.error).toMatchObject({ code: 'invalid_body', param: 'mode' })
    const past = await client.post('/v1/admin/projects/kv/api-keys', client.admin, {
      name: 'a',
      mode: 'live',
      expiresAt: '2020-01-01T00:00:00Z',
    })
    expect(past.body.error).toMatchObject({ code: 'invalid_body', param: 'expiresAt' })
    const noOffset = await client.post('/v1/admin/projects/kv/api-keys', client.admin, {
      name: 'a',
      mode: 'live',
      expiresAt: '2099-01-01T00:00:00',
    })
    expect(noOffset.status).toBe(400)
    const unknownProject = await client.post('/v1/admin/projects/zzz/api-keys', client.admin, {
      name: 'a',
      mode: 'live',
    })
    expect(unknownProject.status).toBe(404)
  })

  it('GET /v1/me describes the calling key', async () => {
    const p = await createProject(client, 'me')
    const r = await client.get('/v1/me', p.live)
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      project: { id: p.project.id, slug: 'me', name: 'Project me', dailyLimit: 5000 },
      key: { id: p.liveId, name: 'live key', mode: 'live', prefix: p.live.slice(0, 12), expiresAt: null },
    })
    const t = await client.get('/v1/me', p.test)
    expect(t.body.key.mode).toBe('test')
  })

  it('renames a key', async () => {
    const p = await createProject(client, 'rename')
    const r = await client.patch(`/v1/admin/api-keys/${p.liveId}`, client.admin, { name: 'renamed' })
    expect(r.body.name).toBe('renamed')
    expect((await client.get('/v1/me', p.live)).body.key.name).toBe('renamed')
    const missing = await client.patch('/v1/admin/api-keys/key_01HZZZZZZZZZZZZZZZZZZZZZZZ', client.admin, {
      name: 'x',
    })
    expect(missing.body.error.code).toBe('api_key_not_found')
  })
})

describe('authentication failures (interface.md part 5)', () => {
  it('missing, malformed and unknown keys', async () => {
    const none = await client.get('/v1/me')
    expect(none.status).toBe(401)
    expect(none.body.error).toMatchObject({ type: 'authentication_error', code: 'missing_api_key' })
    const malformed = await client.get('/v1/me', 'not-a-key')
    expect(malformed.body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' })
    const unknown = await client.get('/v1/me', `fs_live_${'A'.repeat(32)}`)
    expect(unknown.status).toBe(401)
    expect(unknown.body.error.code).toBe('invalid_api_key')
    const code = async (authorization: string) =>
      (await client.get('/v1/me', null, { authorization })).body.error.code
    // A Bearer header whose token is no key is malformed, not missing; another scheme is missing.
    expect(await code(`Bearer fs_live_${'A'.repeat(32)} extra`)).toBe('invalid_api_key')
    expect(await code('Bearer  ')).toBe('missing_api_key')
    expect(await code('Basic dXNlcjpwYXNz')).toBe('missing_api_key')

    // Each 401 names the scheme it wants (RFC 9110), and a key it refused as such (RFC 6750).
    expect(none.headers.get('www-authenticate')).toBe('Bearer')
    expect(unknown.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"')
    const admin = await client.get('/v1/admin/projects', 'not-the-admin-key')
    expect(admin.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"')
    expect((await client.get('/v1/me', client.admin)).headers.get('www-authenticate')).toBe(
      'Bearer error="invalid_token"',
    )
  })

  it('a revoke takes effect on the very next request and cannot be undone', async () => {
    const p = await createProject(client, 'revoke')
    expect((await client.get('/v1/me', p.live)).status).toBe(200) // now cached
    const rv = await client.del(`/v1/admin/api-keys/${p.liveId}`, client.admin)
    expect(rv.body.revokedAt).not.toBeNull()
    const after = await client.get('/v1/me', p.live)
    expect(after.status).toBe(401)
    expect(after.body.error).toMatchObject({ type: 'authentication_error', code: 'revoked_api_key' })
    const again = await client.del(`/v1/admin/api-keys/${p.liveId}`, client.admin)
    expect(again.body.revokedAt).toBe(rv.body.revokedAt)
  })

  it('a revoke holds on the next request even while verifications of the key are in flight', async () => {
    await client.post('/v1/admin/projects', client.admin, { slug: 'racing-revoke', name: 'Racing' })
    for (let round = 0; round < 15; round++) {
      const k = await client.post('/v1/admin/projects/racing-revoke/api-keys', client.admin, {
        name: `k${round}`,
        mode: 'live',
      })
      let stop = false
      // Requests with the key keep verifications in flight across the revoke.
      const load = Promise.all(
        Array.from({ length: 6 }, async () => {
          while (!stop) await client.get('/v1/me', k.body.key)
        }),
      )
      await new Promise((r) => setTimeout(r, 20))
      const rv = await client.del(`/v1/admin/api-keys/${k.body.id}`, client.admin)
      expect(rv.body.revokedAt).not.toBeNull()
      const after = await client.get('/v1/me', k.body.key)
      stop = true
      await load
      expect(after.status).toBe(401)
    }
  })

  it('an expired key fails with expired_api_key', async () => {
    await client.post('/v1/admin/projects', client.admin, { slug: 'exp', name: 'Exp' })
    // Time enough to create and use the key before it expires on a loaded machine (1.5 s was tight).
    const soon = new Date(Date.now() + 3000).toISOString()
    const k = await client.post('/v1/admin/projects/exp/api-keys', client.admin, {
      name: 'short',
      mode: 'live',
      expiresAt: soon,
    })
    expect(k.status).toBe(201)
    expect((await client.get('/v1/me', k.body.key)).status).toBe(200)
    await new Promise((r) => setTimeout(r, Date.parse(soon) + 200 - Date.now()))
    const r = await client.get('/v1/me', k.body.key)
    expect(r.status).toBe(401)
    expect(r.body.error.code).toBe('expired_api_key')
  })

  it('a disabled project gets 403 project_disabled at once, and works again when re-enabled', async () => {
    const p = await createProject(client, 'dis')
    expect((await client.get('/v1/me', p.live)).status).toBe(200)
    await client.patch('/v1/admin/projects/dis', client.admin, { disabled: true })
    const r = await client.get('/v1/me', p.live)
    expect(r.status).toBe(403)
    expect(r.body.error).toMatchObject({ type: 'permission_error', code: 'project_disabled' })
    await client.patch('/v1/admin/projects/dis', client.admin, { disabled: false })
    expect((await client.get('/v1/me', p.live)).status).toBe(200)
  })

  it('admin key only on admin routes; a project key there is not the admin key (401)', async () => {
    const p = await createProject(client, 'scope')
    const adminOnProject = await client.get('/v1/me', client.admin)
    expect(adminOnProject.status).toBe(401)
    expect(adminOnProject.body.error.code).toBe('invalid_api_key')
    // interface.md's admin auth failures: 401 invalid_api_key for anything but the admin key.
    const projectOnAdmin = await client.get('/v1/admin/projects', p.live)
    expect(projectOnAdmin.status).toBe(401)
    expect(projectOnAdmin.body.error).toEqual({
      type: 'authentication_error',
      code: 'invalid_api_key',
      message: 'Invalid admin key: /v1/admin routes take the admin key, not a project API key',
    })
    const wrongAdmin = await client.get('/v1/admin/projects', 'not-the-admin-key')
    expect(wrongAdmin.status).toBe(401)
    expect(wrongAdmin.body.error.code).toBe('invalid_api_key')
    const noneAdmin = await client.get('/v1/admin/projects')
    expect(noneAdmin.body.error.code).toBe('missing_api_key')
  })

  it('records lastUsedAt, at most once a minute', async () => {
    const p = await createProject(client, 'lastused')
    await client.get('/v1/me', p.live)
    await client.get('/v1/me', p.live)
    const read = async () =>
      (await client.get('/v1/admin/api-keys?project=lastused', client.admin)).body.data.find(
        (k: any) => k.id === p.liveId,
      )
    let key: any
    for (let i = 0; i < 80 && !key?.lastUsedAt; i++) {
      await new Promise((r) => setTimeout(r, 100))
      key = await read()
    }
    expect(key.lastUsedAt).not.toBeNull()
    const first = key.lastUsedAt
    await client.get('/v1/me', p.live)
    await new Promise((r) => setTimeout(r, 5500))
    expect((await read()).lastUsedAt).toBe(first)
  })
})

describe('auth service outages', () => {
  it('answers 503 service_unavailable within seconds while auth is down, and recovers when it is back', async () => {
    const p = await createProject(client, 'outage')
    await stack.kill('auth')
    const t0 = Date.now()
    const r = await client.get('/v1/me', p.live)
    // At once when NATS has dropped the killed subscriber, else after AUTH_TIMEOUT_MS (1.5 s). A
    // gateway waiting for auth as for any other service (UPSTREAM_TIMEOUT_MS, 10 s here) would
    // take twice the bound; 2 s left a loaded machine half a second beyond the auth time-out.
    expect(Date.now() - t0).toBeLessThan(5_000)
    expect(r.status).toBe(503)
    expect(r.body.error).toMatchObject({ type: 'internal_error', code: 'service_unavailable' })
    await stack.start('auth')
    const back = await client.get('/v1/me', p.live)
    expect(back.status).toBe(200)
  })
})
