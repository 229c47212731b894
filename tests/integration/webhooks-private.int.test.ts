import { waitFor } from '@mailer/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'
import {
  EventPublisher,
  fakeId,
  insertWebhook,
  makeEvent,
  metricValue,
  sleep,
  sql,
} from '../support/webhooks.js'

// WEBHOOK_ALLOW_PRIVATE is not set: the production default.
const { te, stack, client, receiver } = useStack(['auth', 'webhook', 'gateway'], {
  receiver: true,
  after: () => events.close(),
})
let events: EventPublisher
let p: Awaited<ReturnType<typeof createProject>>

beforeAll(async () => {
  events = await EventPublisher.connect(te)
  p = await createProject(client, 'private')
})

describe('outbound safety', () => {
  it.each([
    'http://127.0.0.1:8080/hook',
    'http://127.1.2.3/hook',
    'http://localhost:3000/hook',
    'http://10.0.0.5/hook',
    'http://172.20.1.1/hook',
    'https://192.168.1.10/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://0.0.0.0/hook',
    'http://[::1]:8080/hook',
    'http://[fd00::1]/hook',
    'http://[fe80::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    // Localhost names are loopback whatever the resolver says (RFC 6761), with or without the root dot.
    'http://localhost./hook',
    'http://api.localhost/hook',
    'http://API.LOCALHOST./hook',
  ])('refuses %s at create with 400 invalid_body param url', async (url) => {
    const r = await client.post('/v1/webhooks', p.live, { url })
    expect(r.status).toBe(400)
    expect(r.body.error).toMatchObject({ type: 'validation_error', code: 'invalid_body', param: 'url' })
    expect(r.body.error.message).toMatch(/private/)
  })

  it('accepts a public address, and refuses a private one on update', async () => {
    const ok = await client.post('/v1/webhooks', p.live, {
      url: 'https://93.184.216.34/hook',
      enabled: false,
    })
    expect(ok.status).toBe(201)
    const u = await client.patch(`/v1/webhooks/${ok.body.id}`, p.live, { url: 'http://127.0.0.1/hook' })
    expect(u.status).toBe(400)
    expect(u.body.error).toMatchObject({ code: 'invalid_body', param: 'url' })
    const rows = await sql(te, 'SELECT url FROM webhooks WHERE id = $1', [ok.body.id])
    expect(rows[0].url).toBe('https://93.184.216.34/hook')
  })

  it('fails a delivery to a private address at send time with a clear response body, without retrying', async () => {
    // Saved before the rule applied (or pointed at a private address by DNS later): insert directly.
    const literal = fakeId('wh')
    const named = fakeId('wh')
    const localName = fakeId('wh')
    for (const [id, url] of [
      [literal, receiver.url('/literal')],
      [named, `http://localhost:${receiver.portNumber}/named`],
      [localName, `http://api.localhost:${receiver.portNumber}/local-name`],
    ]) {
      await insertWebhook(te, { id, projectId: p.project.id, url: url!, secret: `whsec_${'a'.repeat(32)}` })
    }
    await events.publish(p.project.id, makeEvent())
    const list = async (id: string) =>
      (await client.get(`/v1/webhooks/${id}/deliveries`, p.live)).body.data as any[]
    for (const [id, host] of [
      [literal, /127\.0\.0\.1|::1/],
      [named, /localhost/],
      [localName, /api\.localhost/],
    ] as const) {
      const d = await waitFor(
        async () => ((await list(id))[0]?.status === 'failed' ? (await list(id))[0] : null),
        { what: `failed delivery of ${id}` },
      )
      expect(d).toMatchObject({ status: 'failed', attempt: 1, responseCode: null, nextAttemptAt: null })
      expect(d.responseBody).toMatch(/^blocked: .*private address; set WEBHOOK_ALLOW_PRIVATE=true/)
      expect(d.responseBody).toMatch(host)
    }
    await sleep(500)
    expect(receiver.requests).toHaveLength(0)
    expect(
      await metricValue(stack.metricsPort('webhook'), 'mailer_webhook_attempts_total', 'outcome="blocked"'),
    ).toBe(3)
  })
})
