import { beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../support/db.js'
import { email, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

const { te, client } = useStack(['auth', 'email', 'gateway'])
let acme: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
})

const batch = (
  body: unknown,
  opts: { key?: string; query?: string; headers?: Record<string, string> } = {},
) => client.post(`/v1/emails/batch${opts.query ?? ''}`, opts.key ?? acme.live, body, opts.headers)
const count = async () => Number((await sql(te, 'SELECT count(*) AS n FROM emails'))[0].n)

describe('POST /v1/emails/batch', () => {
  it('a suppressed recipient fails only its item; the rest are stored, a suppressed one is not', async () => {
    await client.post('/v1/admin/suppressions', client.admin, { address: 'left@x.test' })
    const before = await count()
    const r = await batch([
      email(acme.from, { to: 'kept-1@x.test' }),
      email(acme.from, { to: 'kept-2@x.test', cc: 'LEFT@x.test' }),
      // Suppression comes before the header check (contract order).
      email(acme.from, { to: 'left@x.test', headers: { From: 'x' } }),
      email(acme.from, { to: 'kept-3@x.test' }),
    ])
    expect(r.status).toBe(200)
    const suppressed = {
      error: {
        type: 'unprocessable',
        code: 'recipient_suppressed',
        message: expect.any(String),
        param: 'left@x.test',
      },
    }
    expect(r.body.data).toEqual([
      { id: expect.stringMatching(/^email_/), status: 'queued' },
      suppressed,
      suppressed,
      { id: expect.stringMatching(/^email_/), status: 'queued' },
    ])
    expect(await count()).toBe(before + 2)
    const rows = await sql(
      te,
      `SELECT count(*)::int AS n FROM email_recipients WHERE address = 'left@x.test'`,
    )
    expect(rows[0].n).toBe(0)
  })

  it('answers 200 with one result per item in input order; bad items carry their own error', async () => {
    const r = await batch([
      email(acme.from, { to: 'one@x.test' }),
      email('x@elsewhere.test'),
      email(acme.from, { to: 'two@x.test', headers: { From: 'x' } }),
      email(acme.from, { to: 'three@x.test', scheduledAt: new Date(Date.now() + 3_600_000).toISOString() }),
      'not an object',
    ])
    expect(r.status).toBe(200)
    expect(r.body.data).toEqual([
      { id: expect.stringMatching(/^email_/), status: 'queued' },
      {
        error: {
          type: 'permission_error',
          code: 'invalid_sender',
          message: expect.any(String),
          param: 'from',
        },
      },
      {
        error: {
          type: 'validation_error',
          code: 'invalid_header',
          message: expect.any(String),
          param: 'headers.From',
        },
      },
      { id: expect.stringMatching(/^email_/), status: 'scheduled' },
      { error: { type: 'validation_error', code: 'invalid_body', message: expect.any(String) } },
    ])
    const first = await client.get(`/v1/emails/${r.body.data[0].id}`, acme.live)
    expect(first.body).toMatchObject({
      source: 'batch',
      to: ['one@x.test'],
      status: 'queued',
      apiKeyId: acme.liveId,
    })
    expect(first.body.events.map((e: any) => e.type)).toEqual(['email.queued'])
  })

  it('a test key stores test emails and answers 200', async () => {
    const r = await batch([email(acme.from), email(acme.from)], { key: acme.test })
    expect(r.status).toBe(200)
    expect(r.body.data.map((d: any) => d.status)).toEqual(['test', 'test'])
  })

  it('only a body that is not an array of 1-100 items fails the whole request', async () => {
    const obj = await batch(email(acme.from))
    expect(obj.status).toBe(400)
    expect(obj.body.error.code).toBe('invalid_body')
    const empty = await batch([])
    expect(empty.status).toBe(400)
    expect(empty.body.error.code).toBe('invalid_body')
    const tooMany = await batch(Array(101).fill(email(acme.from)))
    expect(tooMany.status).toBe(400)
    expect(tooMany.body.error.code).toBe('invalid_body')
    const none = await client.call('POST', '/v1/emails/batch', { key: acme.live })
    expect(none.body.error.code).toBe('missing_body')
  })

  it('100 items are accepted in one request', async () => {
    const before = await count()
    const items = Array.from({ length: 100 }, (_, i) =>
      email(acme.from, { to: [`u${i}@x.test`, `v${i}@x.test`] }),
    )
    const r = await batch(items)
    expect(r.status).toBe(200)
    expect(r.body.data.every((d: any) => d.status === 'queued')).toBe(true)
    expect(new Set(r.body.data.map((d: any) => d.id)).size).toBe(100)
    expect(await count()).toBe(before + 100)
    const recipients = await sql(te, 'SELECT count(*) AS n FROM email_recipients WHERE email_id = ANY($1)', [
      r.body.data.map((d: any) => d.id),
    ])
    expect(Number(recipients[0].n)).toBe(200)
  })

  it('?dryRun=true validates every item without storing anything', async () => {
    const before = await count()
    const r = await batch([email(acme.from), email('x@elsewhere.test')], { query: '?dryRun=true' })
    expect(r.status).toBe(200)
    expect(r.body.data).toEqual([
      { id: null, status: 'queued' },
      { error: expect.objectContaining({ code: 'invalid_sender' }) },
    ])
    expect(await count()).toBe(before)
    const bad = await batch([email(acme.from)], { query: '?dryRun=maybe' })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toMatchObject({ code: 'invalid_query', param: 'dryRun' })
  })

  it('item keys: its own idempotencyKey, else <Idempotency-Key>:<index>; a repeat answers the same ids', async () => {
    const items = [
      email(acme.from, { to: 'k0@x.test' }),
      email(acme.from, { to: 'k1@x.test', idempotencyKey: 'own-key' }),
    ]
    const first = await batch(items, { headers: { 'idempotency-key': 'batch-1' } })
    expect(first.body.data.map((d: any) => d.status)).toEqual(['queued', 'queued'])
    const keys = await sql(te, 'SELECT id, idempotency_key FROM emails WHERE id = ANY($1)', [
      first.body.data.map((d: any) => d.id),
    ])
    expect(Object.fromEntries(keys.map((k) => [k.id, k.idempotency_key]))).toEqual({
      [first.body.data[0].id]: 'batch-1:0',
      [first.body.data[1].id]: 'own-key',
    })

    const again = await batch(items, { headers: { 'idempotency-key': 'batch-1' } })
    expect(again.body.data).toEqual([
      { id: first.body.data[0].id, status: 'queued', idempotent: true },
      { id: first.body.data[1].id, status: 'queued', idempotent: true },
    ])
    // The same single send with the item's key answers the batch's email.
    const single = await client.post('/v1/emails', acme.live, items[1])
    expect(single.status).toBe(202)
    expect(single.body).toEqual({ id: first.body.data[1].id, status: 'queued', idempotent: true })
  })

  it('two items sharing a key make one email; a different body under that key is a mismatch', async () => {
    const a = email(acme.from, { to: 'same@x.test', idempotencyKey: 'shared' })
    const r = await batch([a, a, { ...a, subject: 'Different' }])
    expect(r.body.data[0]).toEqual({ id: expect.any(String), status: 'queued' })
    expect(r.body.data[1]).toEqual({ id: r.body.data[0].id, status: 'queued', idempotent: true })
    expect(r.body.data[2].error).toMatchObject({
      type: 'conflict',
      code: 'idempotency_payload_mismatch',
      param: 'idempotencyKey',
    })
  })

  it('an item refused for a suppressed recipient takes no key: a later item holding it is sent on its own', async () => {
    await client.post('/v1/admin/suppressions', client.admin, { address: 'gone@x.test' })
    const key = { idempotencyKey: 'after-suppressed' }
    const items = [
      email(acme.from, { to: 'gone@x.test', ...key }),
      email(acme.from, { to: 'other@x.test', ...key }),
      email(acme.from, { to: 'gone@x.test', ...key }),
      email(acme.from, { to: 'other@x.test', ...key }),
    ]
    const suppressed = {
      error: expect.objectContaining({ code: 'recipient_suppressed', param: 'gone@x.test' }),
    }
    // As the four sent one after the other: the first is refused and stores nothing, the second is
    // a first send under the key, the third is refused again, the fourth repeats the second.
    const dry = await batch(items, { query: '?dryRun=true' })
    expect(dry.body.data).toEqual([
      suppressed,
      { id: null, status: 'queued' },
      suppressed,
      { id: null, status: 'queued' },
    ])
    const before = await count()
    const r = await batch(items)
    expect(r.body.data).toEqual([
      suppressed,
      { id: expect.stringMatching(/^email_/), status: 'queued' },
      suppressed,
      { id: r.body.data[1].id, status: 'queued', idempotent: true },
    ])
    expect(await count()).toBe(before + 1)
    const got = await client.get(`/v1/emails/${r.body.data[1].id}`, acme.live)
    expect(got.body.to).toEqual(['other@x.test'])
  })

  it('a later item under a shared key with a suppressed recipient is 422, suppression coming before idempotency', async () => {
    await client.post('/v1/admin/suppressions', client.admin, { address: 'shut@x.test' })
    const key = { idempotencyKey: 'then-suppressed' }
    const items = [
      email(acme.from, { to: 'open@x.test', ...key }),
      email(acme.from, { to: 'shut@x.test', ...key }),
    ]
    const dry = await batch(items, { query: '?dryRun=true' })
    const r = await batch(items)
    const suppressed = {
      error: expect.objectContaining({ code: 'recipient_suppressed', param: 'shut@x.test' }),
    }
    expect(dry.body.data).toEqual([{ id: null, status: 'queued' }, suppressed])
    expect(r.body.data).toEqual([{ id: expect.stringMatching(/^email_/), status: 'queued' }, suppressed])
  })

  it('items under a key an earlier email holds each answer against that email, whatever the items before them', async () => {
    const first = email(acme.from, { to: 'held@x.test', idempotencyKey: 'held' })
    const sent = await client.post('/v1/emails', acme.live, first)
    expect(sent.status).toBe(202)
    const items = [{ ...first, subject: 'Another body' }, first]
    const expected = [
      { error: expect.objectContaining({ code: 'idempotency_payload_mismatch', param: 'idempotencyKey' }) },
      { id: sent.body.id, status: 'queued', idempotent: true },
    ]
    expect((await batch(items, { query: '?dryRun=true' })).body.data).toEqual(expected)
    const before = await count()
    expect((await batch(items)).body.data).toEqual(expected)
    expect(await count()).toBe(before)
  })

  it('the admin mirror batch records source admin', async () => {
    const r = await client.post('/v1/admin/projects/acme/emails/batch', client.admin, [email(acme.from)])
    expect(r.status).toBe(200)
    const got = await client.get(`/v1/emails/${r.body.data[0].id}`, acme.live)
    expect(got.body).toMatchObject({ source: 'admin', apiKeyId: null })
  })
})
