import { waitFor } from '@mailer/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../support/db.js'
import { email, inSeconds, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'
import { metricValue } from '../support/webhooks.js'

// EMAIL_RETENTION_DAYS with a pruner that runs every second; emails are made old (and settled,
// where a test needs it: no dispatcher runs here) by changing their rows.
const { te, stack, client } = useStack(['auth', 'email', 'broadcast', 'gateway'], {
  env: {
    EMAIL_RETENTION_DAYS: '3',
    EMAIL_PRUNE_INTERVAL_SECONDS: '1',
    BROADCAST_POLL_MS: '50',
    // /v1/admin/stats' counts (email_status_hours) refreshed every second, every hour of them included.
    STATS_REFRESH_SECONDS: '1',
    STATS_FULL_REFRESH_SECONDS: '1',
    // A broadcast's counts are recounted in the background (broadcast_email_counts): soon here.
    BROADCAST_COUNTS_REFRESH_MS: '100',
  },
})
let acme: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme', 'news.acme.test')
})

const send = async (over: Record<string, unknown>, headers?: Record<string, string>) => {
  const r = await client.post('/v1/emails', acme.live, email(acme.from, over), headers)
  expect(r.status).toBe(202)
  return r.body.id as string
}
const settleAndAge = (ids: string[], status: string | null, days: number) =>
  sql(
    te,
    `UPDATE emails SET status = COALESCE($2, status), created_at = now() - ($3::int * interval '1 day')
     WHERE id = ANY($1::text[])`,
    [ids, status, days],
  )
const rowsOf = async (emailId: string) => {
  const [r] = await sql(
    te,
    `SELECT (SELECT count(*) FROM email_events WHERE email_id = $1)::int AS events,
            (SELECT count(*) FROM email_recipients WHERE email_id = $1)::int AS recipients,
            (SELECT count(*) FROM email_contents WHERE email_id = $1)::int AS contents`,
    [emailId],
  )
  return r
}
const gone = (id: string, key = acme.live) =>
  waitFor(async () => ((await client.get(`/v1/emails/${id}`, key)).status === 404 ? true : null), {
    what: `email ${id} pruned`,
    timeoutMs: 15_000,
  })

describe('email retention', () => {
  it('deletes settled emails past the retention with everything they own, and keeps the rest', async () => {
    const before = await metricValue(stack.metricsPort('email'), 'mailer_email_pruned_total')
    const old = await send({ to: 'old@example.com', subject: 'Old' })
    const keyed = await send({ to: 'keyed@example.com', subject: 'Keyed' }, { 'Idempotency-Key': 'order-7' })
    const waiting = await send({ to: 'waiting@example.com', subject: 'Still queued' })
    const recent = await send({ to: 'recent@example.com', subject: 'Recent' })
    const dueLate = await send({ to: 'late@example.com', subject: 'Due late', scheduledAt: inSeconds(3600) })
    expect(await rowsOf(old)).toEqual({ events: 1, recipients: 1, contents: 1 })

    await settleAndAge([old, keyed], 'delivered', 4)
    await settleAndAge([waiting], null, 4) // queued for four days: never deleted while it may still go out
    await settleAndAge([recent], 'delivered', 2) // within the retention
    // Accepted five days ago for two days ago: sent only two days ago, within the retention.
    await settleAndAge([dueLate], 'delivered', 5)
    await sql(te, `UPDATE emails SET scheduled_at = now() - interval '2 days' WHERE id = $1`, [dueLate])
    await gone(old)
    await gone(keyed)

    const r = await client.get(`/v1/emails/${old}`, acme.live)
    expect(r.body.error).toMatchObject({ type: 'not_found', code: 'email_not_found' })
    expect(await rowsOf(old)).toEqual({ events: 0, recipients: 0, contents: 0 })
    expect((await client.get(`/v1/emails/${waiting}`, acme.live)).body.status).toBe('queued')
    expect((await client.get(`/v1/emails/${recent}`, acme.live)).body.status).toBe('delivered')
    expect(await rowsOf(recent)).toEqual({ events: 1, recipients: 1, contents: 1 })
    expect((await client.get(`/v1/emails/${dueLate}`, acme.live)).body.status).toBe('delivered')
    const listed = (await client.get('/v1/emails', acme.live)).body.data.map((e: any) => e.id)
    expect(listed).toEqual(expect.arrayContaining([waiting, recent]))
    expect(listed).not.toContain(old)
    expect(listed).not.toContain(keyed)
    expect(await metricValue(stack.metricsPort('email'), 'mailer_email_pruned_total')).toBe(before + 2)

    // The deleted email's idempotency key is free again: the same request makes a new email.
    const again = await send({ to: 'keyed@example.com', subject: 'Keyed' }, { 'Idempotency-Key': 'order-7' })
    expect(again).not.toBe(keyed)
  })

  it("keeps a broadcast's counts whole when its emails are deleted", async () => {
    const audienceId = (await client.post('/v1/audiences', acme.live, { name: 'Everyone' })).body.id
    await client.post(`/v1/contacts/import?audienceId=${audienceId}`, acme.live, [
      { email: 'ann@example.com', firstName: 'Ann' },
      { email: 'bob@example.com', firstName: 'Bob' },
      { email: 'cy@example.com', firstName: 'Cy' },
    ])
    const b = await client.post('/v1/broadcasts', acme.live, {
      audienceId,
      from: acme.from,
      subject: 'News for {{first_name}}',
      html: '<p>Hi</p><a href="{{unsubscribe_url}}">Unsubscribe</a>',
    })
    await client.post(`/v1/broadcasts/${b.body.id}/send`, acme.live)
    // Sent, with these counts once recounted (the last mismatch is the timeout's message).
    const counts = (expected: Record<string, number>) =>
      waitFor(
        async () => {
          const r = await client.get(`/v1/broadcasts/${b.body.id}`, acme.live)
          expect(r.body.status).toBe('sent')
          expect(r.body.counts).toEqual(expected)
          return r.body.counts
        },
        { what: 'broadcast sent, recounted' },
      )
    expect(await counts({ queued: 3 })).toEqual({ queued: 3 })
    const emails = (await client.get(`/v1/emails?tag=broadcast_id:${b.body.id}`, acme.live)).body.data
    const byTo = Object.fromEntries(emails.map((e: any) => [e.to[0], e.id as string]))
    await sql(te, `UPDATE emails SET status = 'bounced' WHERE id = $1`, [byTo['cy@example.com']])
    await settleAndAge([byTo['ann@example.com']!, byTo['bob@example.com']!], 'delivered', 5)
    await gone(byTo['ann@example.com']!)
    await gone(byTo['bob@example.com']!)

    expect(await counts({ delivered: 2, bounced: 1 })).toEqual({ delivered: 2, bounced: 1 })
    const left = (await client.get(`/v1/emails?tag=broadcast_id:${b.body.id}`, acme.live)).body.data
    expect(left.map((e: any) => e.id)).toEqual([byTo['cy@example.com']])
  })

  it('keeps /v1/admin/stats whole when emails inside its windows are deleted', async () => {
    const s = await projectWithDomain(client, 'tally', 'news.tally.test')
    const sendTo = async (to: string) => {
      const r = await client.post('/v1/emails', s.live, email(s.from, { to }))
      expect(r.status).toBe(202)
      return r.body.id as string
    }
    const [d5, d5b, d20, d40, d1] = await Promise.all(
      ['a', 'b', 'c', 'd', 'e'].map((x) => sendTo(`${x}@example.com`)),
    )
    // A tally left from a deletion 40 days ago: past every window, the pruner trims it.
    await sql(
      te,
      `INSERT INTO pruned_email_tallies (created_at, project_id, status, count)
       VALUES (date_trunc('hour', now() - interval '40 days'), $1, 'delivered', 7)`,
      [s.project.id],
    )
    await settleAndAge([d5!, d5b!], 'delivered', 5) // pruned, inside the 7- and 30-day windows
    await settleAndAge([d20!], 'bounced', 20) // pruned, inside the 30-day window only
    await settleAndAge([d40!], 'delivered', 40) // pruned, outside every window
    await settleAndAge([d1!], 'delivered', 1) // kept
    for (const id of [d5!, d5b!, d20!, d40!]) await gone(id, s.live)

    // As of the next full refresh of the counts, which adds the tallies of deleted emails.
    const tally = async () => {
      const r = await client.get('/v1/admin/stats', client.admin)
      expect(r.status).toBe(200)
      const p = r.body.data.find((p: any) => p.slug === 'tally')
      return { today: p.today, last7d: p.last7d, last30d: p.last30d }
    }
    await expect.poll(tally, { timeout: 20_000 }).toEqual({
      today: {},
      last7d: { delivered: 3 },
      last30d: { delivered: 3, bounced: 1 },
    })
    // Only deletions the windows can still see are tallied, by hour of creation (the two emails
    // aged 5 days share one), and those older are trimmed.
    const [t] = await sql(
      te,
      `SELECT count(*)::int AS n, min(created_at) > now() - interval '31 days' AS recent,
              sum(count)::int AS emails
       FROM pruned_email_tallies WHERE project_id = $1`,
      [s.project.id],
    )
    expect(t).toEqual({ n: 2, recent: true, emails: 3 })
  })
})
