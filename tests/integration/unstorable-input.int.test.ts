import { connect, type NatsConnection } from 'nats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../support/db.js'
import { email, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// Valid JSON that cannot be stored (a NUL, a lone UTF-16 surrogate: PostgreSQL's jsonb refuses
// both) or passed on (nesting that overflowed the encoder's stack) is a contract error on every
// route, and an item error in place in a batch; it was a 500 before.
const { te, stack, client } = useStack(['auth', 'email', 'broadcast', 'webhook', 'gateway'])
let acme: Awaited<ReturnType<typeof projectWithDomain>>
let nc: NatsConnection

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
  nc = await connect({ servers: te.natsUrl })
})
afterAll(async () => {
  await nc?.close()
})

const emailCount = async () => (await sql(te, 'SELECT count(*)::int AS n FROM emails'))[0].n as number

describe('unstorable text and deep nesting', () => {
  it('a lone surrogate in a send is 400 invalid_body naming the field; nothing is stored', async () => {
    const before = await emailCount()
    for (const [over, param] of [
      [{ subject: 'Hi \ud800' }, 'subject'],
      [{ tags: { k: '\udc00' } }, 'tags.k'],
      [{ html: 'a\u0000b' }, 'html'],
    ] as const) {
      const r = await client.post('/v1/emails', acme.live, email(acme.from, over))
      expect(r.status).toBe(400)
      expect(r.body.error).toMatchObject({ type: 'validation_error', code: 'invalid_body', param })
    }
    expect(await client.post('/v1/emails', acme.test, email(acme.from, { subject: '\ud800' }))).toMatchObject(
      {
        status: 400,
      },
    )
    expect(await emailCount()).toBe(before)
  })

  it('in a batch, only the bad item fails, in its place', async () => {
    const r = await client.post('/v1/emails/batch', acme.live, [
      email(acme.from, { subject: 'fine' }),
      email(acme.from, { subject: 'bad \ud800' }),
    ])
    expect(r.status).toBe(200)
    expect(r.body.data[0]).toMatchObject({ status: 'queued' })
    expect(r.body.data[1].error).toMatchObject({ code: 'invalid_body', param: 'subject' })
  })

  it('other routes refuse it too, and any body nested too deep', async () => {
    const c = await client.post('/v1/contacts', acme.live, { email: 'ann@example.com', firstName: 'A\ud800' })
    expect(c.status).toBe(400)
    expect(c.body.error).toMatchObject({ code: 'invalid_body', param: 'firstName' })
    const deep = `{"from":"x","data":${'['.repeat(100_000)}${']'.repeat(100_000)}}`
    const d = await fetch(`${stack.gatewayUrl}/v1/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acme.live}`, 'content-type': 'application/json' },
      body: deep,
    })
    expect(d.status).toBe(400)
    expect(((await d.json()) as any).error).toMatchObject({
      code: 'invalid_body',
      param: expect.stringMatching(/^data\./),
    })
  })

  it('MailerRpc, which does not pass the gateway, refuses it as well', async () => {
    const payload = JSON.stringify({ project: 'acme', args: [email(acme.from, { subject: '\ud800' })] })
    const m = await nc.request(`${te.natsPrefix}.rpc.mailer.send`, new TextEncoder().encode(payload), {
      timeout: 15_000,
    })
    const text = new TextDecoder().decode(m.data)
    expect(text.startsWith('SERVICE_ERROR:')).toBe(true)
    expect(JSON.parse(text.slice('SERVICE_ERROR:'.length))).toMatchObject({
      code: 'invalid_body',
      param: 'subject',
    })
  })

  it("a NUL in a path id is that resource's 404, in a query value or a cursor a 400", async () => {
    const w = await client.get('/v1/webhooks/wh_%00x/deliveries', acme.live)
    expect(w.status).toBe(404)
    expect(w.body.error.code).toBe('webhook_not_found')
    const c = await client.get('/v1/contacts/%00', acme.live)
    expect(c.status).toBe(404)
    expect(c.body.error.code).toBe('contact_not_found')
    const e = await client.get('/v1/events?emailId=%00', acme.live)
    expect(e.status).toBe(400)
    expect(e.body.error).toMatchObject({ code: 'invalid_query', param: 'emailId' })
    const cursor = Buffer.from('2026-01-01T00:00:00.000Z|evt_\u0000x').toString('base64url')
    const p = await client.get(`/v1/events?cursor=${cursor}`, acme.live)
    expect(p.status).toBe(400)
    expect(p.body.error).toMatchObject({ code: 'invalid_query', param: 'cursor' })
  })

  it('an instant PostgreSQL cannot compare (year 0, past 9999) in a filter or a cursor is a 400', async () => {
    const cursor = (raw: string) => Buffer.from(raw).toString('base64url')
    const emailId = 'email_01ARZ3NDEKTSV4RRFFQ69G5FAV'
    for (const [path, param] of [
      ['/v1/emails?since=0000-01-01T00:00:00Z', 'since'],
      ['/v1/emails?until=9999-12-31T23:59:59-23:59', 'until'],
      [`/v1/emails?cursor=${cursor(`-000001-01-01T00:00:00.000Z|${emailId}`)}`, 'cursor'],
      [`/v1/emails?cursor=${cursor(`+275760-09-13T00:00:00.000Z|${emailId}`)}`, 'cursor'],
      ['/v1/events?since=0000-01-01T00:00:00Z', 'since'],
      ['/v1/events?until=0001-01-01T00:00:00%2B01:00', 'until'],
      [`/v1/events?cursor=${cursor('+010000-01-01T00:00:00.000Z|evt_01ARZ3NDEKTSV4RRFFQ69G5FAV')}`, 'cursor'],
    ]) {
      const r = await client.get(path!, acme.live)
      expect(r.status, path).toBe(400)
      expect(r.body.error, path).toMatchObject({ code: 'invalid_query', param })
    }
    const admin = await client.get('/v1/admin/emails?since=0000-01-01T00:00:00Z', client.admin)
    expect(admin.body.error).toMatchObject({ code: 'invalid_query', param: 'since' })
    // The bounds themselves are fine.
    expect((await client.get('/v1/emails?since=0001-01-01T00:00:00Z', acme.live)).status).toBe(200)
    expect((await client.get('/v1/events?until=9999-12-31T23:59:59.999Z', acme.live)).status).toBe(200)
  })

  it('a suppression cursor holding a lone surrogate or year 0 is 400 invalid_query', async () => {
    for (const raw of [
      ['2026-01-01T00:00:00.000Z', 'a\ud800@x.test'],
      ['0000-01-01T00:00:00.000Z', 'a@x.test'],
    ]) {
      const cursor = Buffer.from(JSON.stringify(raw)).toString('base64url')
      const r = await client.get(`/v1/admin/suppressions?cursor=${cursor}`, client.admin)
      expect(r.status, raw.join(' ')).toBe(400)
      expect(r.body.error).toMatchObject({ code: 'invalid_query', param: 'cursor' })
    }
  })
})
