import { waitFor } from '@mailer/testing'
import type { JetStreamClient, NatsConnection } from 'nats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  ANALYTICS_SERVICES,
  analyticsDrained,
  connectEvents,
  ev,
  publishEvent,
} from '../support/analytics-events.js'
import { sql as sqlIn } from '../support/db.js'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'

// What the analytics tables keep: the per-day dimensions (one row per tag value and day, so a
// tag per order or user makes one per email) only as long as a report can read them.
const { te, client } = useStack(ANALYTICS_SERVICES, {
  overrides: { ANALYTICS_PRUNE_INTERVAL_SECONDS: '10' },
})
let nc: NatsConnection
let js: JetStreamClient
const DAY = 86_400_000
const sql = (text: string, params: unknown[] = []) => sqlIn(te, text, params)

beforeAll(async () => {
  ;({ nc, js } = await connectEvents(te))
})
afterAll(async () => {
  await nc?.close()
})

describe('analytics retention', () => {
  it('deletes per-day dimensions older than the longest range, and nothing a report reads', async () => {
    const p = await createProject(client, 'keep')
    const now = Date.now() - 60_000
    const at = (days: number) => new Date(now - days * DAY)
    for (const [i, days] of [
      [1, 0],
      [2, 89],
      [3, 91],
      [4, 200],
    ] as const) {
      await publishEvent(
        te,
        js,
        p.project.id,
        ev(
          'email.sent',
          `email_k${i}`,
          'a@ok.example',
          at(days),
          {},
          {
            order: `o${i}`,
          },
        ),
      )
    }
    await analyticsDrained(te, nc)
    const before = (await client.get('/v1/analytics?range=90d', p.live)).body
    expect(before.topTags).toEqual([
      { value: 'order:o1', count: 1 },
      { value: 'order:o2', count: 1 },
    ])

    await waitFor(
      async () => Number((await sql('SELECT count(*) AS n FROM analytics_dimensions'))[0].n) === 2,
      { timeoutMs: 30_000, what: 'the pruner to delete unread dimension rows' },
    )
    const kept = await sql('SELECT value FROM analytics_dimensions ORDER BY value')
    expect(kept.map((r) => r.value)).toEqual(['order:o1', 'order:o2'])
    // The reports are what they were; the daily aggregates themselves are kept.
    expect((await client.get('/v1/analytics?range=90d', p.live)).body).toEqual(before)
    const days = await sql(`SELECT count(*) AS n FROM analytics_buckets WHERE granularity = 'day'`)
    expect(Number(days[0].n)).toBe(4)
  }, 60_000)
})
