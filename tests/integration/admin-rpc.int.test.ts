import { AdminRpcClient, MailerApiError } from '@mailer/client'
import { adminRpcOperations, ROUTES } from '@mailer/contracts'
import { connect, type NatsConnection } from 'nats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { email, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

/*
 * AdminRpc (libs/contracts/src/rpc.ts): every admin route and mirrored project route, served by
 * its own service as `rpc.admin.<operation>` with the route's handler, called over plain NATS.
 */
const { te, client } = useStack(['auth', 'email', 'webhook', 'analytics', 'broadcast', 'gateway'])
let nc: NatsConnection
let admin: AdminRpcClient
let acme: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
  nc = await connect({ servers: te.natsUrl })
  admin = new AdminRpcClient(nc, { prefix: te.natsPrefix, timeoutMs: 15_000 })
})
afterAll(async () => {
  await nc?.close()
})

const fails = (p: Promise<unknown>) =>
  p.then(
    () => expect.fail('expected an error'),
    (e: unknown) => e,
  )

describe('AdminRpc', () => {
  it('answers every admin and mirrored operation of the catalog (no operation lacks a responder)', async () => {
    const ops = adminRpcOperations(ROUTES)
    expect(ops.length).toBeGreaterThan(50)
    const silent: string[] = []
    const crashed: string[] = []
    // Without a body or path parameters every write is refused before it changes anything.
    await Promise.all(
      ops.map(async (op) => {
        try {
          await admin.call(op.operation, op.scope === 'project' ? { project: 'acme' } : {})
        } catch (e) {
          if (!(e instanceof MailerApiError)) silent.push(`${op.operation}: ${String(e)}`)
          else if (e.status >= 500) crashed.push(`${op.operation}: ${e.code}`)
        }
      }),
    )
    expect(silent).toEqual([])
    expect(crashed).toEqual([])
  })

  it('runs admin routes with their params, query and body', async () => {
    const created = await admin.call<any>('auth.projects.create', { body: { slug: 'beta', name: 'Beta' } })
    expect(created).toMatchObject({ slug: 'beta', name: 'Beta', rpcEnabled: true, disabled: false })
    const got = await admin.call('auth.projects.get', { params: { slug: 'beta' } })
    expect(got).toEqual((await client.get('/v1/admin/projects/beta', client.admin)).body)
    const keys = await admin.call<any>('auth.keys.list', { query: { project: 'acme' } })
    expect(keys.data.map((k: any) => k.id).sort()).toEqual([acme.liveId, acme.testId].sort())
    expect(
      await fails(admin.call('auth.projects.create', { body: { slug: 'beta', name: 'Again' } })),
    ).toMatchObject({
      status: 409,
      code: 'slug_taken',
      param: 'slug',
    })
    const domains = await admin.call<any>('email.domains.list-all')
    expect(domains.data.map((d: any) => d.domain)).toContain('acme.test')
  })

  it('runs a mirrored project route as the admin mirror does: live, no key, source admin', async () => {
    const body = email(acme.from, { subject: 'Over AdminRpc' })
    const sent = await admin.call<any>('email.emails.send', {
      project: 'acme',
      body,
      headers: { 'Idempotency-Key': 'admin-rpc-1', 'x-ignored': 'y' },
    })
    expect(sent).toEqual({ id: expect.stringMatching(/^email_/), status: 'queued' })
    const again = await admin.call<any>('email.emails.send', {
      project: 'acme',
      body,
      headers: { 'idempotency-key': 'admin-rpc-1' },
    })
    expect(again).toEqual({ ...sent, idempotent: true })

    const record = await admin.call<any>('email.emails.get', { project: 'acme', params: { id: sent.id } })
    expect(record).toMatchObject({ id: sent.id, source: 'admin', apiKeyId: null, mode: 'live' })
    expect(record).toEqual((await client.get(`/v1/emails/${sent.id}`, acme.live)).body)

    const list = await admin.call<any>('email.emails.admin-list', {
      query: { project: 'acme', q: 'Over AdminRpc' },
    })
    expect(list.data.map((e: any) => e.id)).toEqual([sent.id])
    const hooks = await admin.call<any>('webhook.webhooks.list', { project: 'acme' })
    expect(hooks).toEqual({ data: [] })
  })

  it('a project operation needs a known project', async () => {
    expect(await fails(admin.call('email.emails.list'))).toMatchObject({
      status: 400,
      code: 'invalid_body',
      param: 'project',
    })
    expect(await fails(admin.call('email.emails.list', { project: 'nobody' }))).toMatchObject({
      status: 404,
      type: 'not_found',
      code: 'project_not_found',
      param: 'project',
    })
  })

  it('a path parameter left out of params (or empty) is 400 invalid_body naming it, never an answer for the empty id', async () => {
    await client.post('/v1/admin/suppressions', client.admin, { address: 'kept@example.com' })
    const cases: Array<[string, Record<string, unknown>, string]> = [
      // Answered { address: '', deleted: false } as if the call had worked.
      ['email.suppressions.remove', {}, 'params.address'],
      ['auth.projects.get', {}, 'params.slug'],
      ['auth.projects.disable', { params: { slug: '' } }, 'params.slug'],
      ['email.domains.setup', { params: { slug: 'acme' } }, 'params.domain'],
      ['email.emails.get', { project: 'acme' }, 'params.id'],
      ['webhook.deliveries.retry', { project: 'acme', params: { id: 'wh_x' } }, 'params.deliveryId'],
    ]
    for (const [operation, req, param] of cases)
      expect(await fails(admin.call(operation, req)), operation).toMatchObject({
        status: 400,
        code: 'invalid_body',
        param,
      })
    // A project operation takes its project from `project`, never from params.slug.
    expect((await admin.call<any>('webhook.webhooks.list', { project: 'acme' })).data).toEqual([])
  })

  it('`project` on an admin operation is refused (400, param project) rather than ignored', async () => {
    // It was ignored: this listed the emails of every project, and analytics summed them all.
    const cases = [
      ['email.emails.admin-list', 'query.project'],
      ['analytics.admin', 'query.project'],
      ['auth.projects.get', 'params.slug'],
      ['email.stats', 'no one project'],
    ]
    for (const [operation, where] of cases)
      expect(await fails(admin.call(operation!, { project: 'acme' })), operation).toMatchObject({
        status: 400,
        code: 'invalid_body',
        param: 'project',
        message: expect.stringContaining(where!),
      })
  })

  it('a project name no project can have (NUL, lone surrogate) is 404 project_not_found, never 500', async () => {
    for (const project of ['\u0000', 'ac\u0000me', '\ud800'])
      expect(await fails(admin.call('email.emails.list', { project }))).toMatchObject({
        status: 404,
        code: 'project_not_found',
        param: 'project',
      })
  })

  it('refuses a body the route could not store exactly as the HTTP route does (400, never 500)', async () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['auth.projects.create', { body: { slug: 'nul', name: 'a\u0000b' } }, 'name'],
      ['auth.projects.create', { body: { slug: 'sur', name: '\ud800' } }, 'name'],
      ['email.suppressions.add', { body: { address: 'a\u0000@example.com' } }, 'address'],
      ['auth.projects.update', { params: { slug: 'acme' }, body: { 'bad\u0000key': 1 } }, 'bad\u0000key'],
      [
        'email.templates.create',
        { project: 'acme', body: { name: 't', subject: 's', html: '\ud800' } },
        'html',
      ],
    ]
    for (const [operation, req, param] of cases) {
      const e = await fails(admin.call(operation, req))
      expect(e, operation).toBeInstanceOf(MailerApiError)
      expect(e, operation).toMatchObject({ status: 400, code: 'invalid_body', param })
    }
    const deep = JSON.parse(`${'{"a":'.repeat(100)}1${'}'.repeat(100)}`)
    expect(await fails(admin.call('auth.projects.create', { body: deep }))).toMatchObject({
      status: 400,
      code: 'invalid_body',
    })
    // An Idempotency-Key that PostgreSQL cannot store: the send route's own error, not a 500.
    const keyed = await fails(
      admin.call('email.emails.send', {
        project: 'acme',
        body: email(acme.from),
        headers: { 'idempotency-key': 'k\u0000' },
      }),
    )
    expect(keyed).toMatchObject({ status: 400, code: 'invalid_body', param: 'idempotencyKey' })
  })

  it('an unknown operation has no responder: the NATS error is thrown as it is', async () => {
    const e = await fails(admin.call('email.nothing.here'))
    expect(e).not.toBeInstanceOf(MailerApiError)
    expect((e as { code?: string }).code).toBe('503')
  })
})
