import {
  AdminClient,
  MailerApiError,
  MailerClient,
  MailerConnectionError,
  verifyWebhook,
} from '@mailer/client'
import { waitFor } from '@mailer/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_KEY } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'

// The SDK against the real services over real HTTP: every call below is a user's call.
const { stack, receiver } = useStack(['auth', 'email', 'webhook', 'gateway'], {
  testEnv: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '200' },
  // The admin stats' counts (email_status_hours) refreshed every second.
  env: { STATS_REFRESH_SECONDS: '1' },
  receiver: true,
})
let admin: AdminClient

beforeAll(async () => {
  admin = new AdminClient({ adminKey: ADMIN_KEY, baseUrl: stack.gatewayUrl })
})

/** A project with a verified domain and a client for each key mode. */
async function project(slug: string) {
  await admin.projects.create({ slug, name: `Project ${slug}` })
  await admin.project(slug).domains.setup(`${slug}.test`)
  const live = await admin.apiKeys.create(slug, { name: 'live', mode: 'live' })
  const test = await admin.apiKeys.create(slug, { name: 'test', mode: 'test' })
  const client = (key: string) => new MailerClient({ apiKey: key, baseUrl: stack.gatewayUrl })
  return {
    live: client(live.key),
    test: client(test.key),
    liveKey: live,
    from: `Sender <hello@${slug}.test>`,
  }
}

async function caught(p: Promise<unknown>): Promise<MailerApiError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  )
  expect(e).toBeInstanceOf(MailerApiError)
  return e as MailerApiError
}

describe('AdminClient', () => {
  it('manages projects and keys', async () => {
    const created = await admin.projects.create({ slug: 'acme', name: 'Acme', dailyLimit: 10 })
    expect(created).toMatchObject({ slug: 'acme', dailyLimit: 10, rpcEnabled: true, disabled: false })
    expect((await admin.projects.list()).data.map((p) => p.slug)).toContain('acme')
    expect((await admin.projects.update('acme', { name: 'Acme Inc' })).name).toBe('Acme Inc')
    expect((await admin.projects.get('acme')).name).toBe('Acme Inc')

    const key = await admin.apiKeys.create('acme', { name: 'ci', mode: 'test' })
    expect(key.key).toMatch(/^fs_test_[A-Za-z0-9]{32}$/)
    expect((await admin.apiKeys.rename(key.id, 'renamed')).name).toBe('renamed')
    const listed = await admin.apiKeys.list('acme')
    expect(listed.data.map((k) => k.name)).toEqual(['renamed'])
    expect(JSON.stringify(listed)).not.toContain(key.key)

    const client = new MailerClient({ apiKey: key.key, baseUrl: stack.gatewayUrl })
    expect((await client.me()).project.slug).toBe('acme')
    await admin.apiKeys.revoke(key.id)
    expect(await caught(client.me())).toMatchObject({
      status: 401,
      type: 'authentication_error',
      code: 'revoked_api_key',
    })

    expect((await admin.projects.disable('acme')).disabled).toBe(true)
  })

  it('throws the contract error with status, param and the request id', async () => {
    await admin.projects.create({ slug: 'dup', name: 'Dup' })
    const e = await caught(admin.projects.create({ slug: 'dup', name: 'Again' }, { requestId: 'my-req-1' }))
    expect(e).toMatchObject({
      status: 409,
      type: 'conflict',
      code: 'slug_taken',
      param: 'slug',
      requestId: 'my-req-1',
    })
    const bad = await caught(admin.projects.create({ slug: 'Not A Slug', name: 'x' }))
    expect(bad).toMatchObject({ status: 400, type: 'validation_error', code: 'invalid_body', param: 'slug' })
    expect(bad.requestId).toMatch(/^req_/)
    expect(await caught(admin.projects.get('missing'))).toMatchObject({
      status: 404,
      code: 'project_not_found',
    })
  })

  it('a wrong admin key, or a project key on admin routes, is refused', async () => {
    const wrong = new AdminClient({ adminKey: 'not-the-key', baseUrl: stack.gatewayUrl })
    expect(await caught(wrong.projects.list())).toMatchObject({ status: 401, code: 'invalid_api_key' })
    const p = await project('keyed')
    const asAdmin = new AdminClient({ adminKey: p.liveKey.key, baseUrl: stack.gatewayUrl })
    expect(await caught(asAdmin.projects.list())).toMatchObject({
      status: 401,
      type: 'authentication_error',
      code: 'invalid_api_key',
    })
  })
})

describe('MailerClient', () => {
  it('sends, reads, lists and cancels emails', async () => {
    const p = await project('sender')
    const sent = await p.live.emails.send({
      from: p.from,
      to: 'alice@example.com',
      subject: 'Hi',
      html: '<p>Hi</p>',
    })
    expect(sent).toMatchObject({ status: 'queued' })
    const trial = await p.test.emails.send({ from: p.from, to: 'bob@example.com', subject: 'Try', text: 'x' })
    expect(trial.status).toBe('test')

    const got = await p.live.emails.get(sent.id)
    expect(got).toMatchObject({ id: sent.id, subject: 'Hi', to: ['alice@example.com'], source: 'http' })
    expect(got.events.length).toBeGreaterThan(0)
    expect((await p.live.emails.content(sent.id)).html).toBe('<p>Hi</p>')

    const later = new Date(Date.now() + 3_600_000).toISOString()
    const scheduled = await p.live.emails.send({
      from: p.from,
      to: 'carol@example.com',
      subject: 'Later',
      text: 'x',
      scheduledAt: later,
    })
    expect(scheduled.status).toBe('scheduled')
    const moved = new Date(Date.now() + 7_200_000)
    expect(Date.parse((await p.live.emails.reschedule(scheduled.id, moved)).scheduledAt!)).toBe(
      moved.getTime(),
    )
    expect(await p.live.emails.cancel(scheduled.id)).toEqual({ id: scheduled.id, status: 'canceled' })
    expect(await caught(p.live.emails.cancel(scheduled.id))).toMatchObject({
      status: 409,
      code: 'not_cancelable',
    })

    const page = await p.live.emails.list({ limit: 2 })
    expect(page.data).toHaveLength(2)
    expect(page.nextCursor).toEqual(expect.any(String))
    const all: string[] = []
    for await (const e of p.live.emails.iterate({ limit: 1 })) all.push(e.id)
    expect(all).toHaveLength(3)
    expect(new Set(all)).toEqual(new Set([sent.id, trial.id, scheduled.id]))
    expect(await caught(p.live.emails.get('email_01ARZ3NDEKTSV4RRFFQ69G5FAV'))).toMatchObject({
      status: 404,
      code: 'email_not_found',
    })
  })

  it('honours an idempotency key, and sends batches with per-item errors', async () => {
    const p = await project('idem')
    const input = { from: p.from, to: 'dave@example.com', subject: 'Once', text: 'x' }
    const first = await p.live.emails.send(input, { idempotencyKey: 'order-42' })
    expect(await p.live.emails.send(input, { idempotencyKey: 'order-42' })).toEqual({
      ...first,
      idempotent: true,
    })
    const other = await caught(
      p.live.emails.send({ ...input, subject: 'Changed' }, { idempotencyKey: 'order-42' }),
    )
    expect(other).toMatchObject({
      status: 409,
      code: 'idempotency_payload_mismatch',
      param: 'idempotencyKey',
    })
    // Without a key of its own, every send is a new email (the generated keys differ).
    const a = await p.live.emails.send(input)
    const b = await p.live.emails.send(input)
    expect(a.id).not.toBe(b.id)

    const batch = await p.live.emails.sendBatch([input, { ...input, from: 'someone@elsewhere.test' }])
    expect(batch.data[0]).toMatchObject({ status: 'queued' })
    expect(batch.data[1]).toMatchObject({ error: { code: 'invalid_sender', param: 'from' } })
    const dry = await p.live.emails.sendBatch([input], { dryRun: true })
    expect(dry.data[0]).toMatchObject({ id: null, status: 'queued' })
  })

  it('sends a key no HTTP header can carry as given, so that the service sees exactly that key', async () => {
    const p = await project('idem-text')
    const input = { from: p.from, to: 'erin@example.com', subject: 'Once', text: 'x' }
    // The input's own field always carried any key: the option's key finds that email.
    const first = await p.live.emails.send({ ...input, idempotencyKey: '订单-42' })
    expect(await p.live.emails.send(input, { idempotencyKey: '订单-42' })).toEqual({
      ...first,
      idempotent: true,
    })
    // fetch drops spaces around a header value: ' order-42 ' was sent as another key, 'order-42'.
    const padded = await p.live.emails.send(input, { idempotencyKey: ' order-42 ' })
    expect(await p.live.emails.send({ ...input, idempotencyKey: ' order-42 ' })).toEqual({
      ...padded,
      idempotent: true,
    })
    expect((await p.live.emails.send(input, { idempotencyKey: 'order-42' })).id).not.toBe(padded.id)

    // A batch: each item without a key of its own gets `<key>:<index>`, as from the header.
    const second = await p.live.emails.send({ ...input, to: 'b1@example.com', idempotencyKey: '批-7:1' })
    const items = [
      { ...input, to: 'b0@example.com' },
      { ...input, to: 'b1@example.com' },
    ]
    const batch = await p.live.emails.sendBatch(items, { idempotencyKey: '批-7' })
    expect(batch.data[0]).toMatchObject({ status: 'queued' })
    expect(batch.data[0]).not.toHaveProperty('idempotent')
    expect(batch.data[1]).toEqual({ ...second, idempotent: true })

    // A request id is a header only: refused before any request, never a connection error.
    const e = await p.live.me({ requestId: '请求-1' }).catch((err: unknown) => err)
    expect(e).toBeInstanceOf(TypeError)
    expect(e).not.toBeInstanceOf(MailerConnectionError)
  })

  it('reports a bad key, a bad field and an unreachable server in their own error types', async () => {
    const bad = new MailerClient({ apiKey: `fs_live_${'a'.repeat(32)}`, baseUrl: stack.gatewayUrl })
    expect(await caught(bad.me())).toMatchObject({
      status: 401,
      type: 'authentication_error',
      code: 'invalid_api_key',
    })
    const p = await project('invalid')
    const e = await caught(
      p.live.emails.send({ from: p.from, to: 'not-an-address', subject: 'x', text: 'x' }),
    )
    expect(e).toMatchObject({ status: 400, type: 'validation_error', code: 'invalid_body', param: 'to.0' })

    const down = new MailerClient({ apiKey: 'fs_test_x', baseUrl: 'http://127.0.0.1:9' })
    await expect(down.me()).rejects.toBeInstanceOf(MailerConnectionError)
  })

  it('lists its keys and domains, and never shows a full key', async () => {
    const p = await project('reader')
    const keys = await p.live.apiKeys.list()
    expect(keys.data.map((k) => k.name).sort()).toEqual(['live', 'test'])
    expect(JSON.stringify(keys)).not.toContain(p.liveKey.key)
    const domains = await p.live.domains.list({ refresh: true })
    expect(domains.data).toEqual([
      expect.objectContaining({ domain: 'reader.test', verification: 'verified' }),
    ])
  })
})

describe('admin emails and stats', () => {
  it('reads emails of any project, their content, and counts by status', async () => {
    const p = await project('across')
    const sent = await p.live.emails.send({
      from: p.from,
      to: 'gina@example.com',
      subject: 'Across',
      text: 'hello',
    })
    const page = await admin.emails.list({ project: 'across' })
    expect(page.data.map((e) => e.id)).toEqual([sent.id])
    expect(page.data[0]!.projectId).toEqual(expect.stringMatching(/^proj_/))
    expect((await admin.emails.get(sent.id)).subject).toBe('Across')
    expect((await admin.emails.content(sent.id)).text).toBe('hello')
    await expect
      .poll(async () => (await admin.stats()).data.find((s) => s.slug === 'across')?.today, {
        timeout: 10_000,
      })
      .toMatchObject({ queued: 1 })
  })
})

describe('admin.project(slug): the admin mirror', () => {
  it('acts on the project live without a key', async () => {
    const p = await project('mirror')
    const m = admin.project('mirror')
    const sent = await m.emails.send({
      from: p.from,
      to: 'erin@example.com',
      subject: 'From admin',
      text: 'x',
    })
    expect(sent.status).toBe('queued')
    const got = await p.live.emails.get(sent.id)
    expect(got).toMatchObject({ apiKeyId: null, source: 'admin', mode: 'live' })
    expect((await m.domains.list()).data.map((d) => d.domain)).toEqual(['mirror.test'])
    expect(await caught(admin.project('nobody').emails.list())).toMatchObject({
      status: 404,
      code: 'project_not_found',
    })
  })
})

describe('path parameters the URL would resolve away', () => {
  it("admin.project('..') never reaches another route: no cross-project read, no write elsewhere", async () => {
    const p = await project('dots')
    const sent = await p.live.emails.send({ from: p.from, to: 'a@example.com', subject: 'Dots', text: 'x' })
    // `/v1/admin/projects/../emails/<id>` is `/v1/admin/emails/<id>` once the URL is resolved: the
    // admin route that reads any project's email. `.` and `..` are no slug, id or name.
    const attempt = async (f: () => Promise<unknown>) => {
      try {
        return await f()
      } catch (e) {
        return e
      }
    }
    for (const slug of ['..', '.']) {
      const read = await attempt(() => admin.project(slug).emails.get(sent.id))
      expect(read, slug).toBeInstanceOf(TypeError)
    }
    expect(await attempt(() => p.live.emails.get('..'))).toBeInstanceOf(TypeError)
    expect(await attempt(() => admin.apiKeys.revoke('.'))).toBeInstanceOf(TypeError)
    expect(await attempt(() => admin.suppressions.remove('..'))).toBeInstanceOf(TypeError)
  })
})

describe('webhooks with the SDK', () => {
  it('creates a webhook, receives the signed test event and verifies it with verifyWebhook', async () => {
    const p = await project('hooks')
    const wh = await p.live.webhooks.create({ url: receiver.url('/sdk'), events: ['email.delivered'] })
    expect(wh.secret).toMatch(/^whsec_/)
    expect((await p.live.webhooks.list()).data.map((w) => w.id)).toEqual([wh.id])
    expect(await p.live.webhooks.get(wh.id)).toEqual((await p.live.webhooks.list()).data[0])

    const { deliveryId } = await p.live.webhooks.test(wh.id)
    const got = await waitFor(() => receiver.requests.find((r) => r.path === '/sdk'), {
      what: 'the test delivery',
    })
    const event = verifyWebhook(wh.secret, got.headers as Record<string, string>, got.raw)
    expect(event).toMatchObject({ type: 'email.delivered', data: { test: true } })
    expect(got.headers['service-delivery-id']).toBe(deliveryId)
    expect(() =>
      verifyWebhook(
        wh.secret.slice(0, -1) + (wh.secret.endsWith('0') ? '1' : '0'),
        got.headers as Record<string, string>,
        got.raw,
      ),
    ).toThrow(/signature/i)

    const rotated = await p.live.webhooks.rotateSecret(wh.id)
    expect(rotated.secret).not.toBe(wh.secret)
    const deliveries = await waitFor(async () => {
      const page = await p.live.webhooks.deliveries(wh.id)
      return page.data[0]?.status === 'success' ? page : null
    })
    expect(deliveries.data[0]).toMatchObject({ id: deliveryId, eventType: 'email.delivered' })
    expect(await p.live.webhooks.delete(wh.id)).toEqual({ id: wh.id, deleted: true })
  })

  it('lists events newest first', async () => {
    const p = await project('evts')
    const sent = await p.live.emails.send({ from: p.from, to: 'frank@example.com', subject: 'E', text: 'x' })
    const events = await waitFor(async () => {
      const page = await p.live.events.list({ emailId: sent.id })
      return page.data.length > 0 ? page : null
    })
    expect(events.data[0]).toMatchObject({ type: 'email.queued', data: { emailId: sent.id } })
  })
})
