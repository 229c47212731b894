import { createPublicKey, createSign, createVerify } from 'node:crypto'
import { waitFor } from '@mailer/testing'
import { connect, type NatsConnection, type Subscription } from 'nats'
import { beforeAll, describe, expect, it } from 'vitest'
import { sql as sqlIn } from '../support/db.js'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'

const { te, client } = useStack(['auth', 'email', 'gateway'], {
  before: async () => {
    nc = await connect({ servers: te.natsUrl })
    const sub: Subscription = nc.subscribe(`${te.natsPrefix}.domains.invalidate`)
    void (async () => {
      for await (const m of sub) invalidations.push(m.json())
    })()
  },
  after: () => nc?.close(),
})

let nc: NatsConnection
let acme: Awaited<ReturnType<typeof createProject>>
let beta: Awaited<ReturnType<typeof createProject>>
const invalidations: Array<{ projectId: string }> = []

const sql = (text: string, params: unknown[] = []) => sqlIn(te, text, params)

const setup = (slug: string, domain: string, key = client.admin) =>
  client.post(`/v1/admin/projects/${slug}/domains/${domain}/setup`, key)
const pOf = (value: string) => /p=([^;\s]+)/.exec(value)?.[1] ?? ''

beforeAll(async () => {
  acme = await createProject(client, 'acme')
  beta = await createProject(client, 'beta')
})

describe('domain setup with DOMAIN_VERIFICATION=skip (the dev default)', () => {
  it('creates the domain verified, with DKIM, SPF and DMARC records to publish', async () => {
    const r = await setup('acme', 'acme.test')
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ domain: 'acme.test', verification: 'verified', checkedAt: null })
    expect(Date.parse(r.body.createdAt)).not.toBeNaN()
    const [dkim, spf, dmarc] = r.body.records
    expect(dkim).toMatchObject({ type: 'TXT', status: 'verified' })
    expect(dkim.name).toMatch(/^mailer\d{14}\._domainkey\.acme\.test$/)
    expect(dkim.value).toMatch(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/]+=*$/)
    expect(spf).toEqual({ type: 'TXT', name: 'acme.test', value: 'v=spf1 a mx ~all', status: 'verified' })
    expect(dmarc).toEqual({
      type: 'TXT',
      name: '_dmarc.acme.test',
      value: 'v=DMARC1; p=none',
      status: 'verified',
    })
  })

  it('publishes a 2048-bit key whose private half is the one stored for signing', async () => {
    const r = await setup('acme', 'acme.test')
    const p = pOf(r.body.records[0].value)
    const pub = createPublicKey({ key: Buffer.from(p, 'base64'), format: 'der', type: 'spki' })
    expect(pub.asymmetricKeyDetails?.modulusLength).toBe(2048)
    const [row] = await sql(
      'SELECT dkim_public_key, dkim_private_key, dkim_selector FROM domains WHERE name = $1',
      ['acme.test'],
    )
    expect(row.dkim_public_key).toBe(p)
    expect(r.body.records[0].name).toBe(`${row.dkim_selector}._domainkey.acme.test`)
    const signature = createSign('sha256').update('message').sign(row.dkim_private_key)
    expect(createVerify('sha256').update('message').verify(pub, signature)).toBe(true)
  })

  it('is idempotent: a repeated setup returns the same domain and key', async () => {
    const first = await setup('acme', 'idem.test')
    const again = await setup('acme', 'IDEM.test.')
    expect(again.status).toBe(200)
    expect(again.body).toEqual(first.body)
    const concurrent = await Promise.all([
      setup('beta', 'race.test'),
      setup('beta', 'race.test'),
      setup('beta', 'race.test'),
    ])
    expect(new Set(concurrent.map((c) => c.body.records[0].value)).size).toBe(1)
    expect(
      await sql("SELECT count(*)::int AS n FROM domains WHERE name IN ('idem.test', 'race.test')"),
    ).toEqual([{ n: 2 }])
  })

  it('gives each project that sets up one domain its own DKIM record name', async () => {
    // Another project's key for shared.test under the selector of every second around this setup:
    // whenever the setup runs, a time-named selector would land on a name already in use.
    const now = Math.floor(Date.now() / 1000) * 1000
    const taken = Array.from({ length: 12 }, (_, i) =>
      new Date(now + (i - 2) * 1000).toISOString().slice(0, 19).replace(/[-T:]/g, ''),
    ).map((t) => `mailer${t}`)
    for (const selector of taken)
      await sql(
        `INSERT INTO domains (id, project_id, name, verification, dkim_selector, dkim_private_key, dkim_public_key)
         VALUES ($1, $2, 'shared.test', 'verified', $3, 'x', 'x')`,
        [`dom_${selector}`, `proj_other_${selector}`, selector],
      )
    const mine = await setup('acme', 'shared.test')
    expect(mine.status).toBe(200)
    const name = mine.body.records[0].name
    expect(name).toMatch(/^mailer\d{14}(-\d+)?\._domainkey\.shared\.test$/)
    expect(taken.map((s) => `${s}._domainkey.shared.test`)).not.toContain(name)

    // Projects setting one domain up at the same moment each get a name of their own too.
    const together = await Promise.all([setup('acme', 'together.test'), setup('beta', 'together.test')])
    const names = together.map((r) => r.body.records[0].name)
    expect(new Set(names).size).toBe(2)
    await sql("DELETE FROM domains WHERE name IN ('shared.test', 'together.test')")
  })

  it('rejects a name that is not a domain with 400 invalid_body (param domain)', async () => {
    for (const bad of [
      'localhost',
      'not_a_domain.test',
      '10.0.0.1',
      '-bad.test',
      `${'a'.repeat(64)}.test`,
      'a..b',
    ]) {
      const r = await setup('acme', encodeURIComponent(bad))
      expect(r.status, bad).toBe(400)
      expect(r.body.error).toMatchObject({ type: 'validation_error', code: 'invalid_body', param: 'domain' })
    }
  })

  it('takes names whose record names fit in DNS (253 characters): at most 217', async () => {
    // Labels of 63, 63, 63 and 20 characters and the top label `test`: 217 characters in all.
    const name = (n: number) => `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(n)}.test`
    expect(name(20)).toHaveLength(217)
    // A project of its own: the lists tested below stay as they are.
    const p = await createProject(client, 'long-names')
    const ok = await setup('long-names', name(20))
    expect(ok.status).toBe(200)
    for (const r of ok.body.records) expect(r.name.length, r.name).toBeLessThanOrEqual(253)
    // One more character and the DKIM record name could not exist: nothing is created.
    const long = await setup('long-names', name(21))
    expect(long.status).toBe(400)
    expect(long.body.error).toMatchObject({ type: 'validation_error', code: 'invalid_body', param: 'domain' })
    expect(long.body.error.message).toContain('217')
    const names = (await client.get('/v1/domains', p.live)).body.data.map((d: any) => d.domain)
    expect(names).toContain(name(20))
    expect(names).not.toContain(name(21))
  })

  it('takes no body fields: unknown ones are 400 invalid_body and create nothing', async () => {
    // JSON null is a body too: not missing (the route needs none), just not one it takes.
    for (const body of [{ region: 'eu' }, [], 'x', null]) {
      const r = await client.post('/v1/admin/projects/acme/domains/bodied.test/setup', client.admin, body)
      expect(r.status, JSON.stringify(body)).toBe(400)
      expect(r.body.error.code).toBe('invalid_body')
    }
    expect(
      (await client.post('/v1/admin/projects/acme/domains/bodied.test/setup', client.admin, {})).status,
    ).toBe(200)
  })

  it('answers 404 project_not_found for an unknown slug', async () => {
    const r = await setup('nobody', 'nobody.test')
    expect(r.status).toBe(404)
    expect(r.body.error).toMatchObject({ type: 'not_found', code: 'project_not_found' })
  })

  it('is admin-only: a project key gets 403 admin_only, no key 401', async () => {
    const r = await setup('acme', 'keyed.test', acme.live)
    expect(r.status).toBe(403)
    expect(r.body.error).toMatchObject({ type: 'permission_error', code: 'admin_only' })
    const none = await client.post('/v1/admin/projects/acme/domains/keyed.test/setup', null)
    expect(none.status).toBe(401)
    expect(none.body.error.code).toBe('missing_api_key')
    // A project key that does not work is only "not the admin key", as on every admin route.
    const wrong = await setup('acme', 'keyed.test', `fs_live_${'x'.repeat(32)}`)
    expect(wrong.status).toBe(401)
    expect(wrong.body.error.code).toBe('invalid_api_key')
  })

  it("on the project's own path a project key is told it needs the admin key; nothing is created", async () => {
    for (const key of [acme.live, acme.test]) {
      const r = await client.post('/v1/domains/own-path.test/setup', key, {})
      expect(r.status).toBe(403)
      expect(r.body.error).toMatchObject({ type: 'permission_error', code: 'admin_only' })
    }
    // The key is checked as on any project route first; the admin key is no project key there.
    const wrong = await client.post('/v1/domains/own-path.test/setup', `fs_live_${'x'.repeat(32)}`, {})
    expect(wrong.body.error.code).toBe('invalid_api_key')
    const admin = await client.post('/v1/domains/own-path.test/setup', client.admin, {})
    expect([admin.status, admin.body.error.code]).toEqual([401, 'invalid_api_key'])
    const none = await client.post('/v1/domains/own-path.test/setup', null)
    expect(none.body.error.code).toBe('missing_api_key')
    const names = (await client.get('/v1/domains', acme.live)).body.data.map((d: any) => d.domain)
    expect(names).not.toContain('own-path.test')
  })

  it('a live send from a new domain works as soon as setup answers', async () => {
    const send = () =>
      client.post('/v1/emails', beta.live, {
        from: 'hi@cached.test',
        to: 'x@example.com',
        subject: 'Hi',
        text: 'Hi',
      })
    const before = await send()
    expect(before.status).toBe(403)
    expect(before.body.error).toMatchObject({ code: 'invalid_sender', param: 'from' })
    expect((await setup('beta', 'cached.test')).body.verification).toBe('verified')
    const after = await send()
    expect(after.status).toBe(202)
    expect(after.body.status).toBe('queued')
  })

  it('tells the accept side to drop its cached sender domains when a domain is created', async () => {
    const before = invalidations.length
    await setup('beta', 'fresh.test')
    await waitFor(() => invalidations.slice(before).some((m) => m.projectId === beta.project.id), {
      what: 'domains.invalidate',
    })
  })
})

describe('domain lists', () => {
  it("GET /v1/domains lists only the calling project's domains, and so does the admin mirror", async () => {
    const mine = await client.get('/v1/domains', acme.live)
    expect(mine.status).toBe(200)
    expect(mine.body.data.map((d: any) => d.domain)).toEqual(['acme.test', 'bodied.test', 'idem.test'])
    expect(Object.keys(mine.body.data[0]).sort()).toEqual([
      'checkedAt',
      'createdAt',
      'domain',
      'records',
      'verification',
    ])
    const testKey = await client.get('/v1/domains', acme.test)
    expect(testKey.body).toEqual(mine.body)
    const mirror = await client.get('/v1/admin/projects/acme/domains', client.admin)
    expect(mirror.status).toBe(200)
    expect(mirror.body).toEqual(mine.body)
    const theirs = await client.get('/v1/domains', beta.live)
    expect(theirs.body.data.map((d: any) => d.domain)).toEqual(['cached.test', 'fresh.test', 'race.test'])
    const unknown = await client.get('/v1/admin/projects/nobody/domains', client.admin)
    expect(unknown.status).toBe(404)
    expect(unknown.body.error.code).toBe('project_not_found')
  })

  it('GET /v1/admin/domains lists every domain with its project', async () => {
    const r = await client.get('/v1/admin/domains', client.admin)
    expect(r.status).toBe(200)
    const byName = Object.fromEntries(r.body.data.map((d: any) => [`${d.slug}/${d.domain}`, d]))
    expect(Object.keys(byName).sort()).toEqual([
      'acme/acme.test',
      'acme/bodied.test',
      'acme/idem.test',
      'beta/cached.test',
      'beta/fresh.test',
      'beta/race.test',
      // The longest name a sending domain may have (above).
      `long-names/${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(20)}.test`,
    ])
    expect(byName['acme/acme.test']).toMatchObject({ projectId: acme.project.id, verification: 'verified' })
    expect(byName['beta/race.test'].projectId).toBe(beta.project.id)
    const denied = await client.get('/v1/admin/domains', acme.live)
    expect(denied.status).toBe(401)
    expect(denied.body.error.code).toBe('invalid_api_key')
  })

  it('a bad refresh value is 400 invalid_query', async () => {
    const r = await client.get('/v1/domains?refresh=maybe', acme.live)
    expect(r.status).toBe(400)
    expect(r.body.error).toMatchObject({ code: 'invalid_query', param: 'refresh' })
  })
})
