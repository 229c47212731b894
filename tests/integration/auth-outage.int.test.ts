import { setTimeout as sleep } from 'node:timers/promises'
import { start } from '@mailer/gateway/app'
import { loadEnv } from '@mailer/gateway/env'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { email, projectWithDomain } from '../support/emails.js'
import { api } from '../support/http.js'
import { useStack } from '../support/use-stack.js'

// An auth restart (rollout, crash, OOM) must not stop sending for keys the gateway verified a
// moment before: past its 5-second cache such a key is still taken while no auth replica can
// answer, for AUTH_STALE_GRACE_SECONDS (300 by default). Two more gateways show the bounds: one
// with a grace of 1 s, one with 0 (answers 503 as soon as the cache is out of date).
const VERIFIED_TTL_MS = 5_000

const { stack, client } = useStack(['auth', 'email', 'gateway'])
let shortGrace: Awaited<ReturnType<typeof start>>
let noGrace: Awaited<ReturnType<typeof start>>
let acme: Awaited<ReturnType<typeof projectWithDomain>>
let revokedKey: string
/** When every gateway had verified the keys it knows (each cached them before answering). */
let verifiedBy = 0
let sentDuringOutage = ''

const unavailable = { type: 'internal_error', code: 'service_unavailable' }
const send = (c: ReturnType<typeof api>, key: string, n: string) =>
  c.post('/v1/emails', key, email(acme.from, { to: `outage-${n}@example.org` }), { 'idempotency-key': n })
const staleUses = async () => {
  const text = await (await fetch(`http://127.0.0.1:${stack.metricsPort('gateway')}/metrics`)).text()
  return Number(/^mailer_gateway_auth_stale_total (\d+)/m.exec(text)?.[1] ?? 'NaN')
}

beforeAll(async () => {
  shortGrace = await start(loadEnv(stack.env({ AUTH_STALE_GRACE_SECONDS: '1' })))
  noGrace = await start(loadEnv(stack.env({ AUTH_STALE_GRACE_SECONDS: '0' })))
  acme = await projectWithDomain(client, 'outage')
  const k = await client.post('/v1/admin/projects/outage/api-keys', client.admin, {
    name: 'gone',
    mode: 'live',
  })
  revokedKey = k.body.key

  // Each gateway verifies the live key; the main one also the key revoked next.
  for (const g of [client, api(shortGrace.url), api(noGrace.url)])
    expect((await g.get('/v1/me', acme.live)).status).toBe(200)
  expect((await client.get('/v1/me', revokedKey)).status).toBe(200)
  verifiedBy = Date.now()
  expect((await client.del(`/v1/admin/api-keys/${k.body.id}`, client.admin)).status).toBe(200)
  expect((await client.get('/v1/me', revokedKey)).body.error?.code).toBe('revoked_api_key')

  await stack.stop('auth')
  await sleep(Math.max(0, verifiedBy + VERIFIED_TTL_MS + 500 - Date.now()))
})
afterAll(async () => {
  await shortGrace?.stop()
  await noGrace?.stop()
})

describe('the auth service down, past the gateway cache of verified keys', () => {
  it('still takes a key this gateway verified before: the send is accepted', async () => {
    const r = await send(client, acme.live, 'during-outage')
    expect([r.status, r.body.status]).toEqual([202, 'queued'])
    sentDuringOutage = r.body.id
    expect(await staleUses()).toBeGreaterThanOrEqual(1)
  })

  it('answers 503 for a key it never verified', async () => {
    const r = await send(client, acme.test, 'unknown')
    expect([r.status, r.body.error]).toEqual([503, expect.objectContaining(unavailable)])
  })

  it('does not take a key revoked before the outage', async () => {
    // Refusals are never kept, and auth is not there to refuse it again: 503, never 202.
    const r = await send(client, revokedKey, 'revoked')
    expect([r.status, r.body.error]).toEqual([503, expect.objectContaining(unavailable)])
  })

  it('answers 503 with a grace of 0, as without the grace', async () => {
    const r = await send(api(noGrace.url), acme.live, 'no-grace')
    expect([r.status, r.body.error]).toEqual([503, expect.objectContaining(unavailable)])
  })

  it('answers 503 once the grace has passed', async () => {
    await sleep(Math.max(0, verifiedBy + VERIFIED_TTL_MS + 1_000 + 500 - Date.now()))
    const r = await send(api(shortGrace.url), acme.live, 'past-grace')
    expect([r.status, r.body.error]).toEqual([503, expect.objectContaining(unavailable)])
  })

  it('once auth is back, the email sent meanwhile is there and the revoked key is refused', async () => {
    await stack.start('auth')
    const got = await client.get(`/v1/emails/${sentDuringOutage}`, acme.live)
    expect([got.status, got.body.id, got.body.to]).toEqual([
      200,
      sentDuringOutage,
      ['outage-during-outage@example.org'],
    ])
    const r = await client.get('/v1/me', revokedKey)
    expect([r.status, r.body.error?.code]).toEqual([401, 'revoked_api_key'])
  })
})
