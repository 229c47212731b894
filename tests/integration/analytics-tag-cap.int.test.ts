import type { JetStreamClient, NatsConnection } from 'nats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  ANALYTICS_SERVICES,
  analyticsDrained,
  connectEvents,
  counts,
  ev,
  publishEvent,
} from '../support/analytics-events.js'
import { sql as sqlIn } from '../support/db.js'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'

// A tag per order or user (as Resend and Postmark users send) made one `analytics_dimensions` row
// per email and day; the distinct values of a project, day and kind are now capped, the rest
// pooled under one `(other)` row that reports leave out.
const MAX = 20
const { te, client } = useStack(ANALYTICS_SERVICES, {
  overrides: { ANALYTICS_MAX_DIMENSION_VALUES: String(MAX) },
})
let nc: NatsConnection
let js: JetStreamClient
const EMAILS = 90
const today = new Date(Date.now() - 60_000)
const sql = (text: string, params: unknown[] = []) => sqlIn(te, text, params)

beforeAll(async () => {
  ;({ nc, js } = await connectEvents(te))
})
afterAll(async () => {
  await nc?.close()
})

describe('analytics dimension cap', () => {
  it('keeps at most the cap of distinct tag values per project and day, plus one overflow row', async () => {
    const p = await createProject(client, 'tagcap')
    const other = await createProject(client, 'tagcap-other')
    // Every email: a plan tag (a third `free`, the rest `pro`) and an order id of its own.
    const plan = (i: number) => (i % 3 === 0 ? 'free' : 'pro')
    for (let i = 0; i < EMAILS; i += 30) {
      await Promise.all(
        Array.from({ length: 30 }, (_, j) => i + j).map((n) =>
          publishEvent(
            te,
            js,
            p.project.id,
            ev(
              'email.sent',
              `email_cap${n}`,
              `r${n}@cap.example`,
              today,
              {},
              { plan: plan(n), order: `o${n}` },
            ),
          ),
        ),
      )
    }
    // Another project's values have room of their own.
    await publishEvent(
      te,
      js,
      other.project.id,
      ev('email.sent', 'email_cap_o', 'x@cap.example', today, {}, { order: 'o1' }),
    )
    await analyticsDrained(te, nc)

    const rows = await sql(
      `SELECT value, count FROM analytics_dimensions WHERE project_id = $1 AND kind = 'tag'`,
      [p.project.id],
    )
    expect(rows.length).toBeLessThanOrEqual(MAX + 1)
    expect(rows.map((r) => r.value)).toContain('(other)')
    // Pooled, never lost: every tag of every email is counted somewhere.
    expect(rows.reduce((n, r) => n + Number(r.count), 0)).toBe(EMAILS * 2)

    const r = await client.get('/v1/analytics?range=7d', p.live)
    expect(r.status).toBe(200)
    expect(r.body.totals).toEqual(counts({ sent: EMAILS }))
    expect(r.body.topTags.slice(0, 2)).toEqual([
      { value: 'plan:pro', count: (EMAILS * 2) / 3 },
      { value: 'plan:free', count: EMAILS / 3 },
    ])
    expect(r.body.topTags).toHaveLength(10)
    for (const t of r.body.topTags.slice(2))
      expect(t).toEqual({ value: expect.stringMatching(/^order:o\d+$/), count: 1 })

    const o = await client.get('/v1/analytics?range=7d', other.live)
    expect(o.body.topTags).toEqual([{ value: 'order:o1', count: 1 }])
  }, 60_000)

  it('leaves the overflow row out of topBouncedDomains and of the all-projects view', async () => {
    const p = await createProject(client, 'domaincap')
    // A bounce at a domain of its own per email: past the cap, the rest pool under `(other)`.
    const BOUNCES = MAX + 10
    await Promise.all(
      Array.from({ length: BOUNCES }, (_, n) =>
        publishEvent(
          te,
          js,
          p.project.id,
          ev('email.bounced', `email_dom${n}`, `r@d${n}.example`, today, {
            bounce: { type: 'hard', reason: '550' },
          }),
        ),
      ),
    )
    await analyticsDrained(te, nc)
    const rows = await sql(
      `SELECT value FROM analytics_dimensions WHERE project_id = $1 AND kind = 'bounced_domain'`,
      [p.project.id],
    )
    expect(rows.map((r) => r.value)).toContain('(other)')

    for (const [path, key] of [
      ['/v1/analytics?range=7d', p.live],
      ['/v1/admin/analytics?range=7d&project=domaincap', client.admin],
      ['/v1/admin/analytics?range=7d', client.admin],
      ['/v1/admin/analytics?range=7d&interval=hour', client.admin],
    ] as const) {
      const r = await client.get(path, key)
      expect(r.status, path).toBe(200)
      expect(r.body.topBouncedDomains, path).toHaveLength(10)
      for (const t of r.body.topBouncedDomains)
        expect(t, path).toEqual({ value: expect.stringMatching(/^d\d+\.example$/), count: 1 })
      expect(
        r.body.topTags.map((t: { value: string }) => t.value),
        path,
      ).not.toContain('(other)')
    }
  }, 60_000)
})
