import { encodeError, rpcRequestId } from '@mailer/bus'
import { AdminRpcClient, MailerApiError, MailerRpcClient } from '@mailer/client'
import { AdminRpcRequest, MAILER_RPC_METHODS, MailerError, MailerRpcRequest } from '@mailer/contracts'
import { useTestEnv } from '@mailer/testing'
import { connect, headers, type NatsConnection, type Subscription } from 'nats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/*
 * The client's half of the RPC wire format over a real NATS server, against a responder that
 * speaks libs/contracts/src/rpc.ts with the bus's own error encoding: the exact request bodies,
 * and the replies the services cannot be made to give on demand (a garbled error, silence).
 * rpc.int.test.ts and admin-rpc.int.test.ts run the same clients against the real services.
 */
const te = useTestEnv()
let nc: NatsConnection
const subs: Subscription[] = []
const received: { subject: string; body: unknown }[] = []
/** Per call: the X-Request-Id header as sent, and the id the services' RPC entry takes from it. */
const ids: { header: string | null; server: string }[] = []
const enc = new TextEncoder()

beforeAll(async () => {
  nc = await connect({ servers: te.natsUrl })
  const sub = nc.subscribe(`${te.natsPrefix}.rpc.>`, {
    callback: (_err, msg) => {
      const body = JSON.parse(new TextDecoder().decode(msg.data))
      const subject = msg.subject.slice(te.natsPrefix.length + 1)
      received.push({ subject, body })
      ids.push({ header: msg.headers?.get('X-Request-Id') || null, server: rpcRequestId(msg) })
      msg.respond(reply(subject, body))
    },
  })
  subs.push(sub)
  await nc.flush()
})
afterAll(async () => {
  for (const s of subs) s.unsubscribe()
  await nc.close()
})

function reply(subject: string, body: unknown): Uint8Array {
  if (subject.startsWith('rpc.admin.')) {
    const req = AdminRpcRequest.parse(body)
    if (subject === 'rpc.admin.auth.projects.get' && req.params.slug === 'missing') {
      return encodeError(new MailerError('project_not_found', 'No project missing'))
    }
    return enc.encode(JSON.stringify({ operation: subject, request: req }))
  }
  const { project, args } = MailerRpcRequest.parse(body)
  if (project === 'off')
    return encodeError(new MailerError('rpc_disabled', 'RPC is disabled for this project'))
  if (project === 'garbled') return enc.encode('SERVICE_ERROR:{not json')
  const method = subject.slice('rpc.mailer.'.length) as keyof typeof MAILER_RPC_METHODS
  MAILER_RPC_METHODS[method].args.parse(args)
  if (method === 'send')
    return enc.encode(JSON.stringify({ id: 'email_1', status: 'queued', input: args[0] }))
  if (method === 'get')
    return enc.encode(args[0] === 'email_missing' ? 'null' : JSON.stringify({ id: args[0] }))
  if (method === 'sendBatch') {
    const err = new MailerError('invalid_sender', 'not yours', { param: 'from' })
    return enc.encode(
      JSON.stringify({ data: [{ id: 'email_2', status: 'queued' }, { error: err.toJSON() }] }),
    )
  }
  if (method === 'cancel') return encodeError(new MailerError('not_cancelable', 'Already sent'))
  return enc.encode(JSON.stringify({ data: [], nextCursor: null, query: args[0] ?? null }))
}

const rpc = (project = 'acme') => new MailerRpcClient(nc, project, { prefix: te.natsPrefix })

describe('MailerRpcClient', () => {
  it('sends { project, args } on rpc.mailer.<method> and returns the JSON result', async () => {
    received.length = 0
    const input = {
      from: 'a@acme.test',
      to: 'b@example.com',
      subject: 'Hi',
      text: 'x',
      idempotencyKey: 'own',
    }
    const sent = await rpc().send(input, { idempotencyKey: 'wins' })
    expect(sent).toMatchObject({ id: 'email_1', status: 'queued' })
    expect(received[0]).toEqual({
      subject: 'rpc.mailer.send',
      body: { project: 'acme', args: [{ ...input, idempotencyKey: 'wins' }] },
    })

    await rpc().send({ ...input, idempotencyKey: undefined })
    expect(
      (received[1]!.body as { args: { idempotencyKey?: string }[] }).args[0]!.idempotencyKey,
    ).toBeUndefined()

    expect(await rpc().get('email_1')).toEqual({ id: 'email_1' })
    expect(await rpc().get('email_missing')).toBeNull()
    expect(await rpc().list({ status: 'queued', limit: 5 })).toMatchObject({
      query: { status: 'queued', limit: 5 },
    })
    expect(await rpc().list()).toMatchObject({ query: null })
    const batch = await rpc().sendBatch([input, input])
    expect(batch.data[1]).toEqual({
      error: {
        type: 'permission_error',
        code: 'invalid_sender',
        message: 'not yours',
        param: 'from',
        status: 403,
      },
    })
    expect(received.map((r) => r.subject)).toEqual([
      'rpc.mailer.send',
      'rpc.mailer.send',
      'rpc.mailer.get',
      'rpc.mailer.get',
      'rpc.mailer.list',
      'rpc.mailer.list',
      'rpc.mailer.sendBatch',
    ])
  })

  it('decodes SERVICE_ERROR replies into MailerApiError with type, code, message, param and status', async () => {
    const off = await rpc('off')
      .send({ to: 'b@example.com', text: 'x' })
      .catch((e: unknown) => e)
    expect(off).toBeInstanceOf(MailerApiError)
    expect(off).toMatchObject({
      type: 'permission_error',
      code: 'rpc_disabled',
      status: 403,
      message: 'RPC is disabled for this project',
    })
    await expect(rpc().cancel('email_1')).rejects.toMatchObject({
      type: 'conflict',
      code: 'not_cancelable',
      status: 409,
    })
  })

  it('rethrows what it cannot decode unchanged: a garbled error, no responders, a timeout', async () => {
    const garbled = await rpc('garbled')
      .get('email_1')
      .catch((e: unknown) => e)
    expect(garbled).not.toBeInstanceOf(MailerApiError)
    expect(String(garbled)).toContain('SERVICE_ERROR:{not json')

    const nobody = new MailerRpcClient(nc, 'acme', { prefix: `${te.natsPrefix}x` })
    const noResponders = await nobody.get('email_1').catch((e: unknown) => e)
    expect(noResponders).not.toBeInstanceOf(MailerApiError)
    expect((noResponders as { code?: string }).code).toBe('503')

    const silent = nc.subscribe(`${te.natsPrefix}s.rpc.mailer.get`, { callback: () => undefined })
    await nc.flush()
    const timeout = await new MailerRpcClient(nc, 'acme', { prefix: `${te.natsPrefix}s`, timeoutMs: 200 })
      .get('email_1')
      .catch((e: unknown) => e)
    silent.unsubscribe()
    expect(timeout).not.toBeInstanceOf(MailerApiError)
    expect((timeout as { code?: string }).code).toBe('TIMEOUT')
  })
})

describe('limits of the connection and the options', () => {
  it("a request over the server's max_payload is a 413 payload_too_large, as over REST, and is not sent", async () => {
    const max = (nc.info as { max_payload: number }).max_payload
    const withIds = new MailerRpcClient(nc, 'acme', { prefix: te.natsPrefix, headers })
    const sizeOf = (html: string, project = 'acme') =>
      enc.encode(JSON.stringify({ project, args: [{ to: 'b@example.com', html }] })).length
    const filler = (bytes: number, project?: string) => 'x'.repeat(bytes - sizeOf('', project))
    received.length = 0
    // Over the limit by its body: refused before NATS is asked.
    const over = await withIds
      .send({ to: 'b@example.com', html: filler(max + 1) }, { requestId: 'req_big' })
      .catch((e: unknown) => e)
    expect(over).toBeInstanceOf(MailerApiError)
    expect(over).toMatchObject({
      type: 'validation_error',
      code: 'payload_too_large',
      status: 413,
      requestId: 'req_big',
    })
    expect((over as Error).message).toContain(String(max))
    // Under it by its body, over it with the X-Request-Id header: refused by the NATS library,
    // whose error (MAX_PAYLOAD_EXCEEDED, thrown as it was before) becomes the same answer.
    const byHeader = await withIds
      .send({ to: 'b@example.com', html: filler(max - 5) }, { requestId: 'req_header' })
      .catch((e: unknown) => e)
    expect(byHeader).toBeInstanceOf(MailerApiError)
    expect(byHeader).toMatchObject({ code: 'payload_too_large', status: 413, requestId: 'req_header' })
    // Exactly at the limit without headers: sent and answered (by a short error: the responder's
    // echo of a send would be over the limit itself).
    await expect(rpc('off').send({ to: 'b@example.com', html: filler(max, 'off') })).rejects.toMatchObject({
      code: 'rpc_disabled',
    })
    expect(received.map((r) => r.subject)).toEqual(['rpc.mailer.send'])
  })

  it('a timeoutMs NATS would not wait for as asked is a TypeError when the client is made', () => {
    // nats.js made 0 and NaN its 1 s default, timed Infinity and > 2³¹ − 1 out at once and
    // failed every call for a negative one.
    for (const timeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, '1000']) {
      const opts = { prefix: te.natsPrefix, timeoutMs: timeoutMs as number }
      expect(() => new MailerRpcClient(nc, 'acme', opts), String(timeoutMs)).toThrow(/timeoutMs/)
      expect(() => new AdminRpcClient(nc, opts), String(timeoutMs)).toThrow(TypeError)
    }
    expect(() => new MailerRpcClient(nc, 'acme', { timeoutMs: 1 })).not.toThrow()
    expect(() => new AdminRpcClient(nc, { timeoutMs: 2 ** 31 - 1 })).not.toThrow()
  })
})

describe('AdminRpcClient', () => {
  it('throws a TypeError at once for an operation name no subject can carry', async () => {
    // 'auth projects.list' split the subject on the wire: the call waited out its time-out.
    const admin = new AdminRpcClient(nc, { prefix: te.natsPrefix, timeoutMs: 2_000 })
    for (const operation of [
      'auth projects.list',
      'auth.projects.list\n',
      'auth.*',
      'auth.>',
      'auth..list',
      '.auth',
    ])
      expect(() => admin.call(operation), JSON.stringify(operation)).toThrow(TypeError)
    for (const prefix of ['my prefix', 'a.>', 'a..b']) {
      expect(() => new AdminRpcClient(nc, { prefix }), prefix).toThrow(TypeError)
      expect(() => new MailerRpcClient(nc, 'acme', { prefix }), prefix).toThrow(TypeError)
    }
    expect(new MailerRpcClient(nc, 'acme', { prefix: '' }).project).toBe('acme')
  })

  it('calls rpc.admin.<operation> with { project?, params, query, body, headers }', async () => {
    const admin = new AdminRpcClient(nc, { prefix: te.natsPrefix })
    const r = await admin.call<{ operation: string; request: unknown }>('email.emails.send', {
      project: 'acme',
      body: { to: 'b@example.com' },
      headers: { 'idempotency-key': 'k1' },
    })
    expect(r.operation).toBe('rpc.admin.email.emails.send')
    expect(r.request).toEqual({
      project: 'acme',
      params: {},
      query: {},
      body: { to: 'b@example.com' },
      headers: { 'idempotency-key': 'k1' },
    })
    await expect(admin.call('auth.projects.get', { params: { slug: 'missing' } })).rejects.toMatchObject({
      status: 404,
      type: 'not_found',
      code: 'project_not_found',
    })
  })
})

describe('request ids', () => {
  it("with `headers` from nats, a call sends X-Request-Id (the caller's, else a fresh req_…) and its error carries it", async () => {
    const traced = (project: string) => new MailerRpcClient(nc, project, { prefix: te.natsPrefix, headers })
    const input = { to: 'b@example.com', text: 'x' }
    const mine = await traced('off')
      .send(input, { requestId: 'req_mine-1' })
      .catch((e: unknown) => e)
    expect(mine).toBeInstanceOf(MailerApiError)
    expect(mine).toMatchObject({ code: 'rpc_disabled', status: 403, requestId: 'req_mine-1' })
    // The services log the call under the same id (rpcRequestId is their RPC entry's reading).
    expect(ids.at(-1)).toEqual({ header: 'req_mine-1', server: 'req_mine-1' })

    const fresh = (await traced('acme')
      .cancel('email_1')
      .catch((e: unknown) => e)) as MailerApiError
    expect(fresh.requestId).toMatch(/^req_[0-9a-f]{32}$/)
    expect(ids.at(-1)).toEqual({ header: fresh.requestId, server: fresh.requestId })
    const again = (await traced('acme')
      .cancel('email_1')
      .catch((e: unknown) => e)) as MailerApiError
    expect(again.requestId).not.toBe(fresh.requestId)

    const admin = new AdminRpcClient(nc, { prefix: te.natsPrefix, headers })
    await expect(
      admin.call('auth.projects.get', { params: { slug: 'missing' } }, { requestId: 'adm-7' }),
    ).rejects.toMatchObject({ code: 'project_not_found', requestId: 'adm-7' })
    expect(ids.at(-1)?.header).toBe('adm-7')

    // Without `headers` nothing is sent: the service makes its own id, which the client cannot know.
    const bare = (await rpc('off')
      .send(input)
      .catch((e: unknown) => e)) as MailerApiError
    expect(bare.requestId).toBeUndefined()
    expect(ids.at(-1)?.header).toBeNull()
  })

  it('a requestId the services would replace with their own is a TypeError before any request', async () => {
    // The reply carries no id: an id the service replaced went out, the service logged the call
    // under a req_… of its own, and the error still carried the caller's; a line break failed as
    // NATS's own BAD_HEADER error.
    const traced = new MailerRpcClient(nc, 'off', { prefix: te.natsPrefix, headers })
    const admin = new AdminRpcClient(nc, { prefix: te.natsPrefix, headers })
    const before = received.length
    for (const requestId of [' padded ', 'x'.repeat(201), 'ünï', 'a\nb', '']) {
      const e = await traced.get('email_1', { requestId }).catch((x: unknown) => x)
      expect(e, JSON.stringify(requestId)).toBeInstanceOf(TypeError)
      expect(String(e)).toContain('requestId')
      await expect(
        admin.call('auth.projects.get', { params: { slug: 'missing' } }, { requestId }),
      ).rejects.toBeInstanceOf(TypeError)
    }
    expect(received.length).toBe(before)
    // The longest id kept goes out, and comes back on the error, as it is; so does one with
    // spaces and punctuation inside (interface.md: the caller's value is used).
    for (const kept of [`req_${'x'.repeat(196)}`, 'job 7 "nightly" #3']) {
      await expect(traced.get('email_1', { requestId: kept })).rejects.toMatchObject({ requestId: kept })
      expect(ids.at(-1)).toEqual({ header: kept, server: kept })
    }
  })
})
