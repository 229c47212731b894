import { MailerApiError, MailerRpcClient } from '@mailer/client'
import { connect, type NatsConnection } from 'nats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { email, inSeconds, projectWithDomain } from '../support/emails.js'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'

/*
 * MailerRpc (interface.md part 4 "RPC", part 7 "RPC errors"; contract.md part 6) against the real
 * email and auth services, called from a plain NATS connection as an in-cluster worker would.
 */
const { te, stack, client } = useStack(['auth', 'email', 'gateway'])
let nc: NatsConnection
let acme: Awaited<ReturnType<typeof projectWithDomain>>
let other: Awaited<ReturnType<typeof projectWithDomain>>
const enc = new TextEncoder()
const dec = new TextDecoder()

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
  other = await projectWithDomain(client, 'other')
  nc = await connect({ servers: te.natsUrl })
})
afterAll(async () => {
  await nc?.close()
})

/** The raw reply text of `rpc.<subject>` (prefixed like every subject of this deployment). */
async function raw(subject: string, body: unknown): Promise<string> {
  const payload = typeof body === 'string' ? body : JSON.stringify(body)
  const m = await nc.request(`${te.natsPrefix}.${subject}`, enc.encode(payload), { timeout: 15_000 })
  return dec.decode(m.data)
}

/** Calls a MailerRpc method: resolves with the JSON result or rejects with the error object. */
async function rpc(method: string, project: string, ...args: unknown[]): Promise<any> {
  const text = await raw(`rpc.mailer.${method}`, { project, args })
  if (text.startsWith('SERVICE_ERROR:')) throw JSON.parse(text.slice('SERVICE_ERROR:'.length))
  return JSON.parse(text)
}

const fails = (p: Promise<unknown>) =>
  p.then(
    () => expect.fail('expected an error'),
    (e: any) => e,
  )
const adminGet = async (id: string) => (await client.get(`/v1/admin/emails/${id}`, client.admin)).body

describe('send', () => {
  it('is a live send without a key, recorded with source rpc', async () => {
    const r = await rpc('send', 'acme', email(acme.from, { text: 'Hi' }))
    expect(r).toEqual({ id: expect.stringMatching(/^email_[0-9A-Z]{26}$/), status: 'queued' })
    const got = await client.get(`/v1/emails/${r.id}`, acme.live)
    expect(got.status).toBe(200)
    expect(got.body).toMatchObject({
      id: r.id,
      status: 'queued',
      mode: 'live',
      source: 'rpc',
      apiKeyId: null,
    })
  })

  it('answers scheduled for a future scheduledAt', async () => {
    const r = await rpc('send', 'acme', email(acme.from, { scheduledAt: inSeconds(3600) }))
    expect(r.status).toBe('scheduled')
  })

  it("copies opts.idempotencyKey into the input, winning over the input's own key", async () => {
    const input = email(acme.from, { subject: 'Keyed', idempotencyKey: 'own-key' })
    const first = await rpc('send', 'acme', input, { idempotencyKey: 'rpc-wins' })
    expect(first.status).toBe('queued')
    // The key in force is opts' one: repeating it answers the first email again...
    const again = await rpc('send', 'acme', { ...input, idempotencyKey: 'rpc-wins' })
    expect(again).toEqual({ id: first.id, status: 'queued', idempotent: true })
    // ...while the input's own key was never used.
    const own = await rpc('send', 'acme', input)
    expect(own.id).not.toBe(first.id)
    expect(own.idempotent).toBeUndefined()
  })

  it('makes no idempotency key of its own: the same input twice is two emails', async () => {
    const input = email(acme.from, { subject: 'Twice' })
    const a = await rpc('send', 'acme', input)
    const b = await rpc('send', 'acme', input)
    expect(a.id).not.toBe(b.id)
  })

  it('checks suppression and the limits, as a live send does', async () => {
    expect(
      (await client.post('/v1/admin/suppressions', client.admin, { address: 'gone@example.com' })).status,
    ).toBe(201)
    const suppressed = await fails(rpc('send', 'acme', email(acme.from, { to: 'gone@example.com' })))
    expect(suppressed).toMatchObject({
      type: 'unprocessable',
      code: 'recipient_suppressed',
      param: 'gone@example.com',
    })

    await projectWithDomain(client, 'tiny', 'tiny.test', { dailyLimit: 1 })
    expect((await rpc('send', 'tiny', email('a@tiny.test'))).status).toBe('queued')
    const over = await fails(rpc('send', 'tiny', email('a@tiny.test')))
    expect(over).toMatchObject({ type: 'rate_limit_error', code: 'daily_limit_exceeded' })
  })

  it("answers a bad input with the route's own error", async () => {
    const e = await fails(rpc('send', 'acme', email('someone@elsewhere.test')))
    expect(e).toMatchObject({ type: 'permission_error', code: 'invalid_sender', param: 'from' })
    expect(await fails(rpc('send', 'acme', null))).toMatchObject({ code: 'missing_body' })
    expect(await fails(rpc('send', 'acme'))).toMatchObject({ code: 'invalid_body', param: 'args' })
  })
})

describe('sendBatch', () => {
  it('answers { data } in input order, an item error in place, and records source batch', async () => {
    const r = await rpc('sendBatch', 'acme', [email(acme.from), email('x@elsewhere.test'), email(acme.from)])
    expect(r.data).toHaveLength(3)
    expect(r.data[0]).toEqual({ id: expect.stringMatching(/^email_/), status: 'queued' })
    expect(r.data[1]).toEqual({
      error: { type: 'permission_error', code: 'invalid_sender', message: expect.any(String), param: 'from' },
    })
    expect((await adminGet(r.data[2].id)).source).toBe('batch')
    expect((await adminGet(r.data[0].id)).apiKeyId).toBeNull()
  })

  it('answers what POST /v1/emails/batch answers for the same body that is no batch', async () => {
    // sendBatch(null) was 400 invalid_body args.0 where the route (and send(null)) says missing_body,
    // and a body that is no array named args.0 where the route names nothing.
    for (const body of [null, {}, 'x', 5]) {
      const viaHttp = await client.post('/v1/emails/batch', acme.live, body)
      expect(viaHttp.status, JSON.stringify(body)).toBe(400)
      const e = await fails(rpc('sendBatch', 'acme', body))
      expect(e, JSON.stringify(body)).toEqual({ ...viaHttp.body.error, status: 400 })
    }
  })

  it('refuses more than 100 inputs', async () => {
    const e = await fails(
      rpc(
        'sendBatch',
        'acme',
        Array.from({ length: 101 }, () => email(acme.from)),
      ),
    )
    expect(e).toMatchObject({ code: 'invalid_body', type: 'validation_error' })
  })
})

describe('get, list, cancel', () => {
  it("get returns the project's email exactly as GET /v1/emails/:id, else null", async () => {
    const sent = await client.post('/v1/emails', acme.live, email(acme.from))
    const got = await rpc('get', 'acme', sent.body.id)
    expect(got).toEqual((await client.get(`/v1/emails/${sent.body.id}`, acme.live)).body)
    expect(got.source).toBe('http')

    expect(await rpc('get', 'other', sent.body.id)).toBeNull()
    expect(await rpc('get', 'acme', 'email_01ARZ3NDEKTSV4RRFFQ69G5FAV')).toBeNull()
    expect(await rpc('get', 'acme', 'not-an-id')).toBeNull()
  })

  it('list is GET /v1/emails: same page, same filters, same errors', async () => {
    const viaHttp = await client.get('/v1/emails?limit=2&status=queued', acme.live)
    const page1 = await rpc('list', 'acme', { limit: 2, status: 'queued' })
    expect(page1).toEqual(viaHttp.body)
    expect(page1.data).toHaveLength(2)
    expect(page1.nextCursor).toEqual(expect.any(String))
    const page2 = await rpc('list', 'acme', { limit: 2, status: 'queued', cursor: page1.nextCursor })
    expect(page2.data[0].id < page1.data[1].id).toBe(true)

    const all = await rpc('list', 'other')
    expect(all).toEqual({ data: [], nextCursor: null })
    const bad = await fails(rpc('list', 'acme', { status: 'lost' }))
    expect(bad).toMatchObject({ type: 'validation_error', code: 'invalid_query', param: 'status' })
  })

  it("cancel returns { id, status: 'canceled' }, then 409 not_cancelable; another project's email is 404", async () => {
    const s = await rpc('send', 'acme', email(acme.from, { scheduledAt: inSeconds(3600) }))
    expect(await rpc('cancel', 'acme', s.id)).toEqual({ id: s.id, status: 'canceled' })
    expect((await adminGet(s.id)).status).toBe('canceled')
    expect(await fails(rpc('cancel', 'acme', s.id))).toMatchObject({
      type: 'conflict',
      code: 'not_cancelable',
    })
    const theirs = await rpc('send', 'other', email(other.from))
    expect(await fails(rpc('cancel', 'acme', theirs.id))).toMatchObject({ code: 'email_not_found' })
  })
})

describe('projects and errors', () => {
  it('replies SERVICE_ERROR: followed by the error JSON, nothing else', async () => {
    await createProject(client, 'quiet', { rpcEnabled: false })
    const text = await raw('rpc.mailer.send', { project: 'quiet', args: [email('a@quiet.test')] })
    expect(text.startsWith('SERVICE_ERROR:{')).toBe(true)
    const err = JSON.parse(text.slice('SERVICE_ERROR:'.length))
    expect(err).toEqual({
      type: 'permission_error',
      code: 'rpc_disabled',
      message: expect.any(String),
      status: 403,
    })
  })

  it('unknown project → 404 project_not_found; disabled → 403 project_disabled', async () => {
    expect(await fails(rpc('list', 'nobody'))).toMatchObject({
      type: 'not_found',
      code: 'project_not_found',
      param: 'project',
    })
    await projectWithDomain(client, 'gone', 'gone.test')
    expect((await rpc('list', 'gone')).data).toEqual([])
    expect((await client.del('/v1/admin/projects/gone', client.admin)).status).toBe(200)
    expect(await fails(rpc('list', 'gone'))).toMatchObject({
      type: 'permission_error',
      code: 'project_disabled',
    })
  })

  it('a project change applies to the very next call (the cached project is dropped)', async () => {
    await projectWithDomain(client, 'flip', 'flip.test')
    expect((await rpc('send', 'flip', email('a@flip.test'))).status).toBe('queued')
    await client.patch('/v1/admin/projects/flip', client.admin, { rpcEnabled: false })
    expect(await fails(rpc('send', 'flip', email('a@flip.test')))).toMatchObject({ code: 'rpc_disabled' })
    await client.patch('/v1/admin/projects/flip', client.admin, { rpcEnabled: true })
    expect((await rpc('send', 'flip', email('a@flip.test'))).status).toBe('queued')
  })

  it('null for an optional argument is the argument left out (JSON has no undefined)', async () => {
    // A caller passing its arguments on as they are (`[input, opts]` with opts undefined) sends null.
    const sent = await rpc('send', 'acme', email(acme.from, { subject: 'Null opts' }), null)
    expect(sent).toEqual({ id: expect.stringMatching(/^email_/), status: 'queued' })
    const listed = await rpc('list', 'acme', null)
    expect(listed.data.map((e: any) => e.id)).toContain(sent.id)
    // Null where an argument is required is still refused.
    expect(await fails(rpc('get', 'acme', null))).toMatchObject({ code: 'invalid_body', param: 'args.0' })
  })

  it('a project name no project can have (NUL, lone surrogate) is 404 project_not_found, never 500', async () => {
    for (const project of ['\u0000', 'ac\u0000me', '\ud800'])
      expect(await fails(rpc('list', project))).toMatchObject({
        status: 404,
        code: 'project_not_found',
        param: 'project',
      })
  })

  it('a malformed request is 400 invalid_body naming what is wrong', async () => {
    expect(await fails(rpc('get', ''))).toMatchObject({ code: 'invalid_body', param: 'project' })
    expect(await fails(rpc('get', 'acme'))).toMatchObject({ code: 'invalid_body', param: 'args' })
    expect(await fails(rpc('get', 'acme', 42))).toMatchObject({ code: 'invalid_body', param: 'args.0' })
    const notJson = await raw('rpc.mailer.list', '{nope')
    expect(JSON.parse(notJson.slice('SERVICE_ERROR:'.length))).toMatchObject({ code: 'invalid_body' })
  })
})

describe("the SDK's MailerRpcClient against the services", () => {
  const sdk = (project = 'acme') => new MailerRpcClient(nc, project, { prefix: te.natsPrefix })

  it('sends, reads and lists, with get null for a missing email', async () => {
    const sent = await sdk().send(email(acme.from, { subject: 'From the SDK' }), { idempotencyKey: 'sdk-1' })
    expect(sent.status).toBe('queued')
    expect(
      (await sdk().send(email(acme.from, { subject: 'From the SDK' }), { idempotencyKey: 'sdk-1' }))
        .idempotent,
    ).toBe(true)
    expect((await sdk().get(sent.id))?.subject).toBe('From the SDK')
    expect(await sdk('other').get(sent.id)).toBeNull()
    expect((await sdk().list({ q: 'From the SDK' })).data.map((e) => e.id)).toEqual([sent.id])
  })

  it('decodes failures into MailerApiError with type, code, message, param and status', async () => {
    const e = await fails(sdk('quiet').list())
    expect(e).toBeInstanceOf(MailerApiError)
    expect(e).toMatchObject({ type: 'permission_error', code: 'rpc_disabled', status: 403 })
    const sender = await fails(
      sdk().send({ from: 'a@elsewhere.test', to: 'b@example.com', subject: 'x', text: 'x' }),
    )
    expect(sender).toMatchObject({ code: 'invalid_sender', param: 'from', status: 403 })
  })

  it('throws a TypeError at once without a connection or a project slug', () => {
    expect(() => new MailerRpcClient(undefined as never, 'acme')).toThrow(TypeError)
    expect(() => new MailerRpcClient(nc, '')).toThrow(TypeError)
  })

  // Last: stops the email service.
  it('rethrows NATS errors unchanged: no responders once the email service is gone', async () => {
    await stack.stop('email')
    const e = await fails(sdk().get('email_01ARZ3NDEKTSV4RRFFQ69G5FAV'))
    expect(e).not.toBeInstanceOf(MailerApiError)
    expect(e.code).toBe('503')
  })
})
