import { beforeAll, describe, expect, it } from 'vitest'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'

const { client } = useStack(['auth', 'email', 'gateway'])
let project: Awaited<ReturnType<typeof createProject>>

const add = (body: unknown) => client.post('/v1/admin/suppressions', client.admin, body)
const list = (query = '') => client.get(`/v1/admin/suppressions${query}`, client.admin)

beforeAll(async () => {
  project = await createProject(client, 'acme')
})

describe('adding suppressions', () => {
  it('adds an address lower-cased, with reason manual by default', async () => {
    const r = await add({ address: '  Bob@Example.COM ' })
    expect(r.status).toBe(201)
    expect(r.body).toEqual({
      address: 'bob@example.com',
      reason: 'manual',
      sourceEmailId: null,
      createdAt: expect.any(String),
    })
    expect(Date.parse(r.body.createdAt)).not.toBeNaN()
  })

  it('adds and removals of one address racing each other answer 201 and 200, never 500', async () => {
    for (let round = 0; round < 20; round++) {
      const answers = await Promise.all([
        ...Array.from({ length: 5 }, () => add({ address: 'racer@example.com' })),
        ...Array.from({ length: 5 }, () =>
          client.del('/v1/admin/suppressions/racer%40example.com', client.admin),
        ),
      ])
      expect(answers.slice(0, 5).map((a) => a.status)).toEqual([201, 201, 201, 201, 201])
      expect(answers.slice(5).map((a) => a.status)).toEqual([200, 200, 200, 200, 200])
    }
    // Whichever won the last round, the other tests count the list without it.
    await client.del('/v1/admin/suppressions/racer%40example.com', client.admin)
  })

  it('returns an existing entry, upgrading to a stronger reason and never downgrading', async () => {
    const first = await add({ address: 'carol@example.com', reason: 'manual' })
    const bounce = await add({ address: 'Carol@example.com', reason: 'hard_bounce' })
    expect(bounce.status).toBe(201)
    expect(bounce.body).toMatchObject({
      address: 'carol@example.com',
      reason: 'hard_bounce',
      createdAt: first.body.createdAt,
    })
    const complaint = await add({ address: 'carol@example.com', reason: 'complaint' })
    expect(complaint.body.reason).toBe('complaint')
    for (const weaker of ['manual', 'hard_bounce']) {
      const again = await add({ address: 'carol@example.com', reason: weaker })
      expect(again.status).toBe(201)
      expect(again.body).toEqual(complaint.body)
    }
    const same = await add({ address: 'bob@example.com' })
    expect(same.body.reason).toBe('manual')
  })

  it('rejects bad input with the contract errors', async () => {
    const none = await client.post('/v1/admin/suppressions', client.admin)
    expect(none.status).toBe(400)
    expect(none.body.error).toMatchObject({ type: 'validation_error', code: 'missing_body' })
    const json = await client.call('POST', '/v1/admin/suppressions', {
      key: client.admin,
      rawBody: '{"address":',
      headers: { 'content-type': 'application/json' },
    })
    expect(json.status).toBe(400)
    expect(json.body.error.code).toBe('invalid_body')
    for (const [body, param] of [
      [{}, 'address'],
      [{ address: 'not-an-address' }, 'address'],
      [{ address: 'a b@example.com' }, 'address'],
      [{ address: 42 }, 'address'],
      [{ address: 'dan@example.com', reason: 'spam' }, 'reason'],
    ] as const) {
      const r = await add(body)
      expect(r.status, JSON.stringify(body)).toBe(400)
      expect(r.body.error).toMatchObject({ type: 'validation_error', code: 'invalid_body', param })
    }
    const extra = await add({ address: 'dan@example.com', sourceEmailId: 'email_x' })
    expect(extra.status).toBe(400)
    expect(extra.body.error.code).toBe('invalid_body')
    expect((await list('?q=dan@')).body.data).toEqual([])
  })
})

describe('listing suppressions', () => {
  const page = [
    'p1@list.test',
    'p2@list.test',
    'p3@list.test',
    'p4@list.test',
    'p5@list.test',
    'p6@list.test',
    'p7@list.test',
  ]

  beforeAll(async () => {
    for (const address of page) await add({ address })
  })

  it('pages newest first with an opaque cursor until nextCursor is null', async () => {
    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const r: Awaited<ReturnType<typeof list>> = await list(
        `?q=list.test&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      )
      expect(r.status).toBe(200)
      expect(r.body.data.length).toBeLessThanOrEqual(3)
      seen.push(...r.body.data.map((s: any) => s.address))
      cursor = r.body.nextCursor
      pages++
    } while (cursor)
    expect(pages).toBe(3)
    expect(seen).toEqual([...page].reverse())
  })

  it('defaults to 50 per page and lists everything, newest first', async () => {
    const r = await list()
    expect(r.body.nextCursor).toBeNull()
    expect(r.body.data.length).toBe(9)
    expect(r.body.data[0]).toMatchObject({ address: 'p7@list.test', reason: 'manual', sourceEmailId: null })
    const times = r.body.data.map((s: any) => Date.parse(s.createdAt))
    expect([...times].sort((a, b) => b - a)).toEqual(times)
  })

  it('q matches a substring, case-insensitively, with no wildcards', async () => {
    await add({ address: 'a_b@wild.test' })
    await add({ address: 'axb@wild.test' })
    expect((await list('?q=CAROL')).body.data.map((s: any) => s.address)).toEqual(['carol@example.com'])
    expect((await list('?q=a_b')).body.data.map((s: any) => s.address)).toEqual(['a_b@wild.test'])
    expect((await list('?q=%25')).body.data).toEqual([])
    expect((await list('?q=nobody')).body).toEqual({ data: [], nextCursor: null })
  })

  it('q is trimmed like the addresses it searches (a pasted address with spaces or a line break)', async () => {
    await add({ address: 'pasted@trim.test' })
    for (const q of [' Pasted@Trim.test ', 'pasted@trim.test\n', '\tpasted@']) {
      const r = await list(`?q=${encodeURIComponent(q)}`)
      expect(r.status, JSON.stringify(q)).toBe(200)
      expect(
        r.body.data.map((s: any) => s.address),
        JSON.stringify(q),
      ).toEqual(['pasted@trim.test'])
    }
    await client.del('/v1/admin/suppressions/pasted%40trim.test', client.admin)
  })

  it('q finds a plus address typed into the URL unencoded (the + arrives as a space)', async () => {
    await add({ address: 'ann+news@plus.test' })
    for (const q of ['?q=ann+news', '?q=ANN+NEWS@plus.test', '?q=ann%2Bnews']) {
      expect(
        (await list(q)).body.data.map((s: any) => s.address),
        q,
      ).toEqual(['ann+news@plus.test'])
    }
    await client.del('/v1/admin/suppressions/ann%2Bnews%40plus.test', client.admin)
  })

  it('rejects bad query parameters with 400 invalid_query', async () => {
    for (const [query, param] of [
      ['?limit=0', 'limit'],
      ['?limit=201', 'limit'],
      ['?limit=ten', 'limit'],
      ['?cursor=bm9wZQ', 'cursor'],
    ]) {
      const r = await list(query)
      expect(r.status, query).toBe(400)
      expect(r.body.error).toMatchObject({ type: 'validation_error', code: 'invalid_query', param })
    }
    expect((await list('?limit=200')).status).toBe(200)
  })
})

describe('removing suppressions', () => {
  it('removes by URL-encoded address, any case; a second removal says deleted: false', async () => {
    await add({ address: 'eve+tag@example.com' })
    const r = await client.del(
      `/v1/admin/suppressions/${encodeURIComponent('Eve+Tag@Example.com')}`,
      client.admin,
    )
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ address: 'eve+tag@example.com', deleted: true })
    expect((await list('?q=eve')).body.data).toEqual([])
    const again = await client.del('/v1/admin/suppressions/eve%2Btag%40example.com', client.admin)
    expect(again.body).toEqual({ address: 'eve+tag@example.com', deleted: false })
  })
})

describe('effect on sends', () => {
  it('a live send to a suppressed address is 422 recipient_suppressed until it is removed', async () => {
    expect((await client.post('/v1/admin/projects/acme/domains/acme.test/setup', client.admin)).status).toBe(
      200,
    )
    const send = (key: string) =>
      client.post('/v1/emails', key, {
        from: 'hi@acme.test',
        to: 'Blocked@Example.com',
        subject: 'Hi',
        text: 'Hi',
      })
    await add({ address: 'blocked@example.com', reason: 'complaint' })
    const refused = await send(project.live)
    expect(refused.status).toBe(422)
    expect(refused.body.error).toMatchObject({ code: 'recipient_suppressed', param: 'blocked@example.com' })
    expect((await send(project.test)).status).toBe(200)
    await client.del('/v1/admin/suppressions/blocked%40example.com', client.admin)
    expect((await send(project.live)).status).toBe(202)
  })
})

describe('suppressions are admin-only', () => {
  it('a project key is not the admin key on any suppression route (401 invalid_api_key)', async () => {
    for (const r of [
      await client.get('/v1/admin/suppressions', project.live),
      await client.post('/v1/admin/suppressions', project.live, { address: 'x@example.com' }),
      await client.del('/v1/admin/suppressions/x%40example.com', project.live),
    ]) {
      expect(r.status).toBe(401)
      expect(r.body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' })
    }
  })
})
