import { describe, expect, it } from 'vitest'
import { useTestDb } from '../../../tests/support/test-db.js'
import { statsWindows } from '../src/domain/stats.js'
import { pruneEmails } from '../src/infra/email-pruner.js'
import { refreshRange, StatsRefresher } from '../src/infra/stats-rollup.js'
import { countByStatus } from '../src/infra/stats-store.js'

// GET /v1/admin/stats reads email_status_hours, which the stats refresher recomputes hour by hour
// (the current and previous hour each pass, every hour of the windows on a full pass). Emails are
// written and changed straight in the table, as the other services' writes land there.
const t = useTestDb()

const HOUR = 3_600_000
const DAY = 24 * HOUR
let n = 0

/** `count` emails of `project` in `status`, created `ago` ms before now. */
async function emails(project: string, status: string, ago: number, count = 1): Promise<string[]> {
  const ids = Array.from({ length: count }, () => `email_stats_${++n}`)
  await t.db.$executeRawUnsafe(
    `INSERT INTO emails (id, project_id, mode, source, status, from_address, subject, created_at)
     SELECT id, $2, 'live', 'api', $3, 'a@example.com', 's', now() - make_interval(secs => $4::float8 / 1000)
     FROM unnest($1::text[]) id`,
    ids,
    project,
    status,
    ago,
  )
  return ids
}
const setStatus = (ids: string[], status: string) =>
  t.db.$executeRawUnsafe('UPDATE emails SET status = $2 WHERE id = ANY($1::text[])', ids, status)

/**
 * The project's three windows as GET /v1/admin/stats answers them at `now`. The tests pass a clock
 * reading taken before their emails are written: "today" then holds those written "now" even if
 * 00:00 UTC passes before the read (windows taken at the read lost them then).
 */
async function stats(project: string, now: Date) {
  const rows = await countByStatus(t.db, statsWindows(now))
  const out = { today: {}, last7d: {}, last30d: {} } as Record<string, Record<string, number>>
  for (const r of rows.filter((r) => r.projectId === project))
    for (const w of ['today', 'last7d', 'last30d'] as const) if (r[w] > 0) out[w]![r.status] = r[w]
  return out
}

/** A refresher whose every pass is a full one, and one that refreshes the recent hours only. */
const opts = { recentEveryMs: 60_000, chunkHours: 6 }
const full = () => new StatsRefresher(t.db, { ...opts, fullEveryMs: 0 })
const recent = () => new StatsRefresher(t.db, { ...opts, fullEveryMs: DAY })

describe('stats rollup (email_status_hours)', () => {
  it('computes every hour on the first pass, then counts from the rollup, not the emails', async () => {
    const now = new Date()
    const queued = await emails('proj_s1', 'queued', 0, 3)
    await emails('proj_s1', 'delivered', 3 * DAY)
    await emails('proj_s1', 'bounced', 20 * DAY)
    await emails('proj_s1', 'delivered', 40 * DAY) // past every window
    // Never refreshed (a fresh install, an upgrade): the first pass does every hour.
    expect(await stats('proj_s1', now)).toEqual({ today: {}, last7d: {}, last30d: {} })
    expect(await recent().refresh()).toBe('full')
    const first = {
      today: { queued: 3 },
      last7d: { queued: 3, delivered: 1 },
      last30d: { queued: 3, delivered: 1, bounced: 1 },
    }
    expect(await stats('proj_s1', now)).toEqual(first)

    // A change in the emails shows only once refreshed: the stats do not read them.
    await setStatus(queued.slice(0, 2), 'delivered')
    await emails('proj_s1', 'queued', 0)
    expect(await stats('proj_s1', now)).toEqual(first)
    expect(await recent().refresh()).toBe('recent')
    expect(await stats('proj_s1', now)).toEqual({
      today: { queued: 2, delivered: 2 },
      last7d: { queued: 2, delivered: 3 },
      last30d: { queued: 2, delivered: 3, bounced: 1 },
    })
  })

  it("shows an old email's new status after the full pass, not before", async () => {
    const now = new Date()
    const [old] = await emails('proj_s2', 'delivered', 5 * DAY)
    await full().refresh()
    expect((await stats('proj_s2', now)).last7d).toEqual({ delivered: 1 })
    await setStatus([old!], 'bounced') // a late bounce, five days on
    expect(await recent().refresh()).toBe('recent')
    expect((await stats('proj_s2', now)).last7d).toEqual({ delivered: 1 })
    expect(await full().refresh()).toBe('full')
    expect((await stats('proj_s2', now)).last7d).toEqual({ bounced: 1 })
  })

  it('keeps the windows whole when retention deletes emails, tallying them by hour', async () => {
    const now = new Date()
    // Three emails of one hour, a few ms apart, and one of another day.
    const at = 5 * DAY + 30 * 60_000
    const ids = [
      ...(await emails('proj_s3', 'delivered', at)),
      ...(await emails('proj_s3', 'delivered', at + 5)),
      ...(await emails('proj_s3', 'delivered', at + 10)),
      ...(await emails('proj_s3', 'complained', 20 * DAY)),
    ]
    await full().refresh()
    const before = await stats('proj_s3', now)
    expect(before).toEqual({
      today: {},
      last7d: { delivered: 3 },
      last30d: { delivered: 3, complained: 1 },
    })
    while ((await pruneEmails(t.db, 3, 1_000)) > 0) {}
    const left = await t.db.$queryRawUnsafe<unknown[]>(
      'SELECT id FROM emails WHERE id = ANY($1::text[])',
      ids,
    )
    expect(left).toEqual([])
    const tallies = await t.db.$queryRawUnsafe<Array<{ count: number; hourly: boolean }>>(
      `SELECT count, created_at = date_trunc('hour', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hourly
       FROM pruned_email_tallies WHERE project_id = 'proj_s3' ORDER BY created_at DESC`,
    )
    // A row per hour, not per email.
    expect(tallies).toEqual([
      { count: 3, hourly: true },
      { count: 1, hourly: true },
    ])
    expect(await full().refresh()).toBe('full')
    expect(await stats('proj_s3', now)).toEqual(before)
  })

  it('lets one refresher at a time work, and never counts an email twice', async () => {
    const now = new Date()
    await emails('proj_s4', 'queued', 0, 2)
    await emails('proj_s4', 'delivered', 2 * DAY)
    // Another replica holds the lease: this one skips its pass.
    await t.db.$executeRawUnsafe(
      `INSERT INTO email_stats_refresh (id, holder, lease_until)
       VALUES ('email_status_hours', 'other', now() + interval '1 minute')
       ON CONFLICT (id) DO UPDATE SET holder = 'other', lease_until = excluded.lease_until`,
    )
    expect(await full().refresh()).toBe('skipped')
    expect(await stats('proj_s4', now)).toEqual({ today: {}, last7d: {}, last30d: {} })
    await t.db.$executeRawUnsafe(`UPDATE email_stats_refresh SET lease_until = now() - interval '1 second'`)

    // Replicas racing: full passes at once, and the same hour recomputed side by side.
    const outcomes = await Promise.all([full().refresh(), full().refresh(), full().refresh()])
    expect(outcomes).toContain('full')
    const from = new Date(Math.floor(Date.now() / HOUR) * HOUR - 3 * DAY)
    await Promise.all(Array.from({ length: 4 }, () => refreshRange(t.db, { from, hours: 4 * 24 })))
    const want = {
      today: { queued: 2 },
      last7d: { queued: 2, delivered: 1 },
      last30d: { queued: 2, delivered: 1 },
    }
    expect(await stats('proj_s4', now)).toEqual(want)
    const [rows] = await t.db.$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT sum(count)::int AS n FROM email_status_hours WHERE project_id = 'proj_s4'`,
    )
    expect(rows!.n).toBe(3)
  })
})
