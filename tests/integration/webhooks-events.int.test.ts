import { beforeAll, describe, expect, it } from 'vitest'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'
import { fakeId, makeEvent, sql } from '../support/webhooks.js'

const { te, client } = useStack(['auth', 'webhook', 'gateway'])
let p: Awaited<ReturnType<typeof createProject>>
let other: Awaited<ReturnType<typeof createProject>>

type Row = { payload: ReturnType<typeof makeEvent>; mode: 'live' | 'test'; projectId: string }
const rows: Row[] = []
const emailA = fakeId('email')
const T0 = Date.parse('2026-03-01T10:00:00.000Z')
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString()

/** Inserts an event row as the email service writes it. */
async function insert(
  projectId: string,
  mode: 'live' | 'test',
  type: string,
  createdAt: string,
  emailId = fakeId('email'),
) {
  const payload = makeEvent(type, { createdAt, emailId })
  await sql(
    te,
    'INSERT INTO email_events (id, project_id, email_id, mode, type, recipient, payload, created_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)',
    [payload.id, projectId, emailId, mode, type, payload.data.recipient, JSON.stringify(payload), createdAt],
  )
  rows.push({ payload, mode, projectId })
  return payload
}

const ids = (list: any[]) => list.map((e) => e.id)
const expected = (pred: (r: Row) => boolean) =>
  rows
    .filter(pred)
    .sort((x, y) =>
      x.payload.createdAt === y.payload.createdAt
        ? x.payload.id < y.payload.id
          ? 1
          : -1
        : x.payload.createdAt < y.payload.createdAt
          ? 1
          : -1,
    )
    .map((r) => r.payload.id)

beforeAll(async () => {
  p = await createProject(client, 'evlog')
  other = await createProject(client, 'evlog-other')
  const pid = p.project.id
  await insert(pid, 'live', 'email.queued', at(0), emailA)
  await insert(pid, 'live', 'email.sent', at(1), emailA)
  await insert(pid, 'live', 'email.delivered', at(2), emailA)
  await insert(pid, 'live', 'email.queued', at(3))
  await insert(pid, 'live', 'email.bounced', at(4))
  // Two events in the same millisecond: the id breaks the tie.
  await insert(pid, 'live', 'email.opened', at(5), emailA)
  await insert(pid, 'live', 'email.clicked', at(5), emailA)
  await insert(pid, 'test', 'email.test', at(6))
  await insert(other.project.id, 'live', 'email.delivered', at(7))
})

describe('GET /v1/events', () => {
  it("lists the project's live events newest first, payloads exactly as webhooks receive them", async () => {
    const r = await client.get('/v1/events', p.live)
    expect(r.status).toBe(200)
    expect(r.body.nextCursor).toBeNull()
    expect(ids(r.body.data)).toEqual(expected((x) => x.projectId === p.project.id && x.mode === 'live'))
    const delivered = rows.find(
      (x) => x.payload.type === 'email.delivered' && x.projectId === p.project.id,
    )!.payload
    const got = r.body.data.find((e: any) => e.id === delivered.id)
    expect(got).toEqual(delivered)
    expect(Object.keys(got)).toEqual(['id', 'type', 'createdAt', 'data'])
    expect(Object.keys(got.data).slice(0, 5)).toEqual(['emailId', 'recipient', 'from', 'subject', 'tags'])
  })

  it("a test key also sees the project's test-mode events", async () => {
    const r = await client.get('/v1/events', p.test)
    expect(ids(r.body.data)).toEqual(expected((x) => x.projectId === p.project.id))
    expect(r.body.data[0].type).toBe('email.test')
  })

  it('filters by type, emailId, since (inclusive) and until (exclusive)', async () => {
    const byType = await client.get('/v1/events?type=email.queued', p.live)
    expect(ids(byType.body.data)).toEqual(
      expected((x) => x.projectId === p.project.id && x.payload.type === 'email.queued'),
    )
    const byEmail = await client.get(`/v1/events?emailId=${emailA}`, p.live)
    expect(ids(byEmail.body.data)).toEqual(expected((x) => x.payload.data.emailId === emailA))
    expect(byEmail.body.data).toHaveLength(5)
    const window = await client.get(
      `/v1/events?since=${encodeURIComponent(at(1))}&until=${encodeURIComponent('2026-03-01T12:04:00+02:00')}`,
      p.live,
    )
    expect(window.body.data.map((e: any) => e.type)).toEqual([
      'email.queued',
      'email.delivered',
      'email.sent',
    ])
    const both = await client.get(`/v1/events?emailId=${emailA}&type=email.sent`, p.live)
    expect(both.body.data.map((e: any) => e.type)).toEqual(['email.sent'])
    const none = await client.get('/v1/events?type=email.complained', p.live)
    expect(none.body).toEqual({ data: [], nextCursor: null })
  })

  it('takes since and until with a + offset typed into the URL unencoded (decoded as a space)', async () => {
    // at(1) = 10:01Z = 12:01+02:00; until 12:04+02:00 = at(4), exclusive.
    const raw = await client.get(
      '/v1/events?since=2026-03-01T12:01:00+02:00&until=2026-03-01T12:04:00.000+02:00',
      p.live,
    )
    expect(raw.status).toBe(200)
    expect(raw.body.data.map((e: any) => e.type)).toEqual(['email.queued', 'email.delivered', 'email.sent'])
    const encoded = await client.get(
      `/v1/events?since=${encodeURIComponent('2026-03-01T12:01:00+02:00')}&until=${encodeURIComponent('2026-03-01T12:04:00.000+02:00')}`,
      p.live,
    )
    expect(raw.body).toEqual(encoded.body)
    // A space anywhere else is still no instant.
    const spaced = await client.get('/v1/events?since=2026-03-01+12:01:00Z', p.live)
    expect(spaced.status).toBe(400)
    expect(spaced.body.error).toMatchObject({ code: 'invalid_query', param: 'since' })
  })

  it('pages with limit and cursor without gaps or repeats, ties included', async () => {
    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const r: any = await client.get(
        `/v1/events?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        p.live,
      )
      expect(r.status).toBe(200)
      expect(r.body.data.length).toBeLessThanOrEqual(2)
      seen.push(...ids(r.body.data))
      cursor = r.body.nextCursor
      pages++
    } while (cursor)
    expect(pages).toBe(4)
    expect(seen).toEqual(expected((x) => x.projectId === p.project.id && x.mode === 'live'))
    const filtered = await client.get(`/v1/events?emailId=${emailA}&limit=3`, p.live)
    const next = await client.get(
      `/v1/events?emailId=${emailA}&limit=3&cursor=${encodeURIComponent(filtered.body.nextCursor)}`,
      p.live,
    )
    expect([...ids(filtered.body.data), ...ids(next.body.data)]).toEqual(
      expected((x) => x.payload.data.emailId === emailA),
    )
    expect(next.body.nextCursor).toBeNull()
  })

  it('rejects bad query parameters with invalid_query and the param', async () => {
    for (const [q, param] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['type=email.nope', 'type'],
      ['since=2026-03-01T10:00:00', 'since'],
      ['until=yesterday', 'until'],
      ['cursor=%21%21', 'cursor'],
    ]) {
      const r = await client.get(`/v1/events?${q}`, p.live)
      expect(r.status, q).toBe(400)
      expect(r.body.error).toMatchObject({ type: 'validation_error', code: 'invalid_query', param })
    }
  })

  it('is served by the admin mirror as a live caller', async () => {
    const r = await client.get('/v1/admin/projects/evlog/events?limit=100', client.admin)
    expect(r.status).toBe(200)
    expect(ids(r.body.data)).toEqual(expected((x) => x.projectId === p.project.id && x.mode === 'live'))
  })
})

describe('GET /v1/admin/events', () => {
  it('lists every project without ?project, one project with it', async () => {
    const all = await client.get('/v1/admin/events', client.admin)
    expect(all.status).toBe(200)
    expect(ids(all.body.data)).toEqual(expected((x) => x.mode === 'live'))
    const one = await client.get('/v1/admin/events?project=evlog-other', client.admin)
    expect(ids(one.body.data)).toEqual(expected((x) => x.projectId === other.project.id))
    const typed = await client.get('/v1/admin/events?type=email.delivered&limit=1', client.admin)
    expect(typed.body.data).toHaveLength(1)
    expect(typed.body.nextCursor).not.toBeNull()
  })

  it('says which project each event is of, as the admin email list does; the project route does not', async () => {
    // The items were the bare webhook payload: across projects nothing told whose event it was.
    const all = await client.get('/v1/admin/events?limit=100', client.admin)
    const live = rows.filter((r) => r.mode === 'live')
    expect(new Set(live.map((r) => r.projectId)).size).toBe(2)
    expect(all.body.data).toEqual(
      expected((x) => x.mode === 'live').map((id) => {
        const row = rows.find((r) => r.payload.id === id)!
        return { ...row.payload, projectId: row.projectId }
      }),
    )
    expect(Object.keys(all.body.data[0])).toEqual(['id', 'type', 'createdAt', 'data', 'projectId'])
    const mine = await client.get('/v1/events', p.live)
    expect(mine.body.data[0]).not.toHaveProperty('projectId')
  })

  it('404 project_not_found for an unknown slug; project keys get 401 invalid_api_key', async () => {
    const r = await client.get('/v1/admin/events?project=nope', client.admin)
    expect(r.status).toBe(404)
    expect(r.body.error).toMatchObject({ code: 'project_not_found', param: 'project' })
    const bad = await client.get('/v1/admin/events?project=Bad%20Slug', client.admin)
    // Worded as the admin email list and analytics say it, not zod's pattern.
    expect(bad.body.error).toEqual({
      type: 'validation_error',
      code: 'invalid_query',
      message: 'project: project must be a project slug',
      param: 'project',
    })
    const key = await client.get('/v1/admin/events', p.live)
    expect(key.status).toBe(401)
    expect(key.body.error.code).toBe('invalid_api_key')
  })
})
