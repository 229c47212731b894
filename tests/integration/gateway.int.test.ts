import { useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { api } from '../support/http.js'
import { Stack } from '../support/stack.js'

const te = useTestEnv()
const stack = new Stack(te, { MAX_BODY_BYTES: '2048' })
let client: ReturnType<typeof api>

beforeAll(async () => {
  await stack.startAll(['auth', 'gateway'])
  client = api(stack.gatewayUrl)
})
afterAll(() => stack.stopAll())

describe('gateway limits and health', () => {
  it('a body over MAX_BODY_BYTES is 413 payload_too_large', async () => {
    const r = await client.post('/v1/admin/projects', client.admin, { slug: 'big', name: 'x'.repeat(5000) })
    expect(r.status).toBe(413)
    expect(r.body.error).toMatchObject({ type: 'validation_error', code: 'payload_too_large' })
  })

  it('parses a JSON body sent without a Content-Type', async () => {
    const r = await client.call('POST', '/v1/admin/projects', {
      key: client.admin,
      rawBody: JSON.stringify({ slug: 'noct', name: 'No CT' }),
    })
    expect(r.status).toBe(201)
  })

  it('/health answers 503 { ok: false } when the database is down', async () => {
    const broken = new Stack(te, { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' })
    await broken.start('gateway')
    try {
      const r = await api(broken.gatewayUrl).get('/health')
      expect(r.status).toBe(503)
      expect(r.body).toEqual({ ok: false })
    } finally {
      await broken.stopAll()
    }
  })

  it('exposes request metrics by route pattern, never by raw URL', async () => {
    await client.get('/v1/admin/projects/some-slug', client.admin)
    const text = await (await fetch(`http://127.0.0.1:${stack.metricsPort('gateway')}/metrics`)).text()
    expect(text).toMatch(
      /mailer_gateway_http_requests_total\{route="\/v1\/admin\/projects\/:slug",method="GET",status="404"\} 1/,
    )
    expect(text).not.toContain('some-slug')
  })
})
