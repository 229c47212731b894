import { waitFor } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../support/db.js'
import { TcpProxy } from '../support/infra.js'
import { useStack } from '../support/use-stack.js'
import { fakeId } from '../support/webhooks.js'

/**
 * Gauges counted in PostgreSQL (`mailer_webhook_pending_deliveries`, `mailer_broadcast_active`)
 * while PostgreSQL keeps its connections open and answers nothing. A scrape that waited for their
 * counts held /metrics until a connect timeout (5 s) or, on a pooled connection, for good: past
 * Prometheus' scrape timeout, so the pod's every metric went missing with them. The services reach
 * PostgreSQL through a proxy the test hangs.
 */
let pgProxy: TcpProxy
const { te, stack } = useStack([], { after: () => pgProxy.close() })

/** Prometheus' default `scrape_timeout`: a page that takes longer is a failed scrape. */
const SCRAPE_TIMEOUT_MS = 10_000

beforeAll(async () => {
  pgProxy = await TcpProxy.start(Number(new URL(te.databaseUrl).port || 5432))
  const db = new URL(te.databaseUrl)
  db.host = `127.0.0.1:${pgProxy.port}`
  for (const name of ['webhook', 'broadcast'] as const)
    await stack.start(name, { DATABASE_URL: db.toString() })
  // Not due for a day: counted as pending, never claimed during the test.
  for (let i = 0; i < 3; i++)
    await sql(
      te,
      `INSERT INTO webhook_deliveries (id, webhook_id, project_id, event_id, event_type, status, next_attempt_at)
       VALUES ($1, $2, 'proj_hung', $3, 'email.delivered', 'pending', now() + interval '1 day')`,
      [fakeId('whd'), fakeId('wh'), fakeId('evt')],
    )
  for (let i = 0; i < 2; i++)
    await sql(
      te,
      `INSERT INTO broadcasts (id, project_id, audience_id, from_address, subject, html, status, resume_at, updated_at)
       VALUES ($1, 'proj_hung', $2, 'a@hung.test', 'S', '<p>x</p>', 'paused', now() + interval '1 day', now())`,
      [fakeId('bc'), fakeId('aud')],
    )
})
afterAll(() => {
  pgProxy.cut()
  pgProxy.restore()
})

/** A sample's value on the service's /metrics page (undefined when absent). */
async function scrape(
  service: 'webhook' | 'broadcast',
  series: string[],
): Promise<Array<string | undefined>> {
  const r = await fetch(`http://127.0.0.1:${stack.metricsPort(service)}/metrics`, {
    signal: AbortSignal.timeout(SCRAPE_TIMEOUT_MS),
  })
  expect(r.status).toBe(200)
  const page = await r.text()
  return series.map((s) => new RegExp(`^${s.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(page)?.[1])
}

const SERIES = {
  webhook: [
    'mailer_webhook_pending_deliveries',
    'mailer_webhook_gauge_read_timestamp_seconds{gauge="pending_deliveries"}',
  ],
  broadcast: ['mailer_broadcast_active', 'mailer_broadcast_gauge_read_timestamp_seconds{gauge="active"}'],
}

describe('gauges counted in PostgreSQL, while it hangs', () => {
  it('are scraped within the scrape timeout, with the last counts and the time they were read', async () => {
    const want = { webhook: '3', broadcast: '2' }
    for (const service of ['webhook', 'broadcast'] as const)
      await waitFor(async () => (await scrape(service, SERIES[service]))[0] === want[service], {
        timeoutMs: 15_000,
        what: `${service}'s count on /metrics`,
      })
    // Several scrapes at once leave several pooled connections open: a hung server holds any
    // query sent on one of them.
    for (const service of ['webhook', 'broadcast'] as const)
      await Promise.all([1, 2, 3, 4].map(() => scrape(service, SERIES[service])))
    const hungAt = Date.now() / 1000
    pgProxy.hang()
    try {
      for (const round of [1, 2])
        for (const service of ['webhook', 'broadcast'] as const) {
          const [value, readAt] = await scrape(service, SERIES[service])
          expect({ round, service, value }).toEqual({ round, service, value: want[service] })
          // Read before the database hung: the page says how old the count is.
          expect(Number(readAt)).toBeLessThanOrEqual(hungAt)
          expect(Number(readAt)).toBeGreaterThan(hungAt - 60)
        }
    } finally {
      pgProxy.cut()
      pgProxy.restore()
    }
  }, 90_000)
})
