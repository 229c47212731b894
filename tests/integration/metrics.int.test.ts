import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { useTestEnv, waitFor } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { email, projectWithDomain } from '../support/emails.js'
import { api } from '../support/http.js'
import { TestRelay } from '../support/smtp-relay.js'
import { ALL_SERVICES, type ServiceName, Stack } from '../support/stack.js'
import { Receiver } from '../support/webhooks.js'

/**
 * Operators' view: every service exposes /metrics, every metric the Grafana dashboard and the
 * alerts query exists in some service's registry, and the pipeline's counters move when an email
 * is sent.
 */
const SERVICES = ALL_SERVICES
const used: string[] = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../deploy/grafana/metrics-used.json'), 'utf8'),
)

const te = useTestEnv({ WEBHOOK_ALLOW_PRIVATE: 'true' })
let relay: TestRelay
let receiver: Receiver
let stack: Stack
let client: ReturnType<typeof api>

beforeAll(async () => {
  relay = await TestRelay.start()
  receiver = await Receiver.start()
  stack = new Stack(te, { MAIL_TRANSPORT: 'smtp', SMTP_URL: relay.url })
  await stack.startAll(SERVICES)
  client = api(stack.gatewayUrl)
}, 60_000)
afterAll(async () => {
  await stack.stopAll()
  await relay.stop()
  await receiver.close()
})

const scrape = async (s: ServiceName) =>
  (await fetch(`http://127.0.0.1:${stack.metricsPort(s)}/metrics`)).text()

/** Sum of every sample of `name` (all label sets) on a Prometheus text page. */
function total(text: string, name: string): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0)
}

describe('metrics', () => {
  it('every service serves /metrics with its own prefix and process metrics', async () => {
    for (const s of SERVICES) {
      const text = await scrape(s)
      expect(text).toContain(`# TYPE mailer_${s}_process_cpu_seconds_total counter`)
      expect((await fetch(`http://127.0.0.1:${stack.metricsPort(s)}/readyz`)).status).toBe(200)
    }
  })

  it('every metric the dashboard and alerts query exists in a service registry', async () => {
    const pages = (await Promise.all(SERVICES.map(scrape))).join('\n')
    const missing = used.filter((name) => !pages.includes(`# TYPE ${name} `))
    expect(missing).toEqual([])
  })

  it('the documented counters move when an email is sent, and labels stay bounded', async () => {
    const p = await projectWithDomain(client, 'metrics')
    const hook = await client.post('/v1/webhooks', p.live, { url: receiver.url() })
    expect(hook.status).toBe(201)
    const before = {
      accepted: total(await scrape('email'), 'mailer_email_accepted_total'),
      delivered: total(await scrape('dispatcher'), 'mailer_dispatcher_deliveries_total'),
      webhook: total(await scrape('webhook'), 'mailer_webhook_attempts_total'),
      http: total(await scrape('gateway'), 'mailer_gateway_http_requests_total'),
    }
    const sent = await client.post('/v1/emails', p.live, email(p.from, { to: 'reader@example.org' }))
    expect(sent.status).toBe(202)
    await waitFor(
      async () => (await client.get(`/v1/emails/${sent.body.id}`, p.live)).body.status === 'delivered',
      {
        timeoutMs: 20_000,
        what: 'delivery',
      },
    )
    await waitFor(
      async () => total(await scrape('webhook'), 'mailer_webhook_attempts_total') > before.webhook,
      {
        timeoutMs: 20_000,
        what: 'a webhook attempt',
      },
    )
    expect(total(await scrape('email'), 'mailer_email_accepted_total')).toBe(before.accepted + 1)
    expect(total(await scrape('dispatcher'), 'mailer_dispatcher_deliveries_total')).toBeGreaterThan(
      before.delivered,
    )
    expect(total(await scrape('gateway'), 'mailer_gateway_http_requests_total')).toBeGreaterThan(before.http)
    const delivery = await scrape('dispatcher')
    expect(delivery).toMatch(/mailer_dispatcher_delivery_seconds_count(\{[^}]*\})? [1-9]/)

    // No label carries an id, an address or a raw URL.
    for (const s of SERVICES) {
      const text = await scrape(s)
      expect(text).not.toMatch(/email_[0-9A-Z]{26}|proj_[0-9A-Z]{26}|@example\.org|metrics\.test/)
    }
  })
})
