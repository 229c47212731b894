import { useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { api } from '../support/http.js'
import { ADMIN_KEY, ALL_SERVICES, Stack } from '../support/stack.js'
import { TlsNats } from '../support/tls-nats.js'

/**
 * A NATS server with TLS from a private CA that verifies client certificates, given the way
 * docs/operations.md says (NATS_TLS_CA_FILE, NATS_TLS_CERT_FILE, NATS_TLS_KEY_FILE; the chart's
 * externalNats.tls sets them): every service connects with them and the API answers through it.
 */
const te = useTestEnv()
let nats: TlsNats
let stack: Stack | undefined

const SERVICES = ALL_SERVICES

beforeAll(async () => {
  nats = await TlsNats.start()
}, 60_000)
afterAll(async () => {
  await stack?.stopAll()
  await nats?.stop()
})

describe('NATS with TLS and client certificates', () => {
  it('every service connects with the NATS_TLS_* files and turns ready; the API answers over it', async () => {
    stack = new Stack(te, nats.settings())
    await stack.startAll(SERVICES)
    for (const name of SERVICES) {
      const res = await fetch(`http://127.0.0.1:${stack.metricsPort(name)}/readyz`)
      expect(res.status, name).toBe(200)
    }
    // A request-reply to the auth service, which writes to PostgreSQL; the streams were declared
    // over JetStream before the email service and the dispatcher turned ready.
    const created = await api(stack.gatewayUrl).post('/v1/admin/projects', ADMIN_KEY, {
      slug: 'over-tls',
      name: 'Over TLS',
    })
    expect(created.status).toBe(201)
    const listed = await api(stack.gatewayUrl).get('/v1/admin/projects', ADMIN_KEY)
    expect(listed.status).toBe(200)
  }, 120_000)
})
