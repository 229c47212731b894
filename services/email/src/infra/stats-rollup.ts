import { randomUUID } from 'node:crypto'
import type { Db } from '@mailer/db'
import { every, type Loop } from '@mailer/observability'
import type { EmailContext } from '../app.js'
import { type HourRange, olderHours, ROLLUP_HOURS, recentHours } from '../domain/stats.js'

/** The one row of email_stats_refresh. */
const ROW = 'email_status_hours'

/**
 * How long a refresher holds the lease past its last renewal. A pass renews it every quarter of
 * that, between statements, each bounded by DATABASE_QUERY_TIMEOUT_MS (15 s): a live refresher
 * keeps it, and one that died frees it within a minute (the next takes over, from the start).
 */
export const LEASE_SECONDS = 60

/**
 * Recomputes a run of hours of email_status_hours from the emails created in them and the
 * tallies of those the pruner deleted: one statement, so it reads the two under one snapshot (the
 * pruner moves an email from one to the other in one transaction: it is counted once). A range of
 * the `(created_at, id)` index: those hours' emails only, whatever the table holds. Counts are
 * set, never added to, and rows gone from the hours are deleted: running it twice, or on two
 * replicas at once, gives the same rows.
 */
export function refreshRange(db: Db, range: HourRange): Promise<number> {
  // ISO strings, zone included: the driver sends a Date as UTC wall time without a zone, which
  // the server would read in its session's TimeZone. Hours are UTC's.
  const from = range.from.toISOString()
  const to = new Date(range.from.getTime() + range.hours * 3_600_000).toISOString()
  return db.$executeRaw`
    WITH fresh AS (
      SELECT hour, project_id, status, sum(n)::int AS count FROM (
        SELECT date_trunc('hour', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour,
          project_id, status, count(*) AS n FROM emails
        WHERE created_at >= ${from}::timestamptz AND created_at < ${to}::timestamptz
        GROUP BY 1, 2, 3
        UNION ALL
        SELECT date_trunc('hour', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour,
          project_id, status, sum(count) AS n FROM pruned_email_tallies
        WHERE created_at >= ${from}::timestamptz AND created_at < ${to}::timestamptz
        GROUP BY 1, 2, 3
      ) kept_and_pruned
      GROUP BY hour, project_id, status
    ), gone AS (
      DELETE FROM email_status_hours o
      WHERE o.hour >= ${from}::timestamptz AND o.hour < ${to}::timestamptz AND NOT EXISTS (
        SELECT 1 FROM fresh f WHERE f.hour = o.hour AND f.project_id = o.project_id AND f.status = o.status)
    )
    INSERT INTO email_status_hours (hour, project_id, status, count)
    SELECT hour, project_id, status, count FROM fresh ORDER BY hour, project_id, status
    ON CONFLICT (hour, project_id, status) DO UPDATE SET count = excluded.count
    WHERE email_status_hours.count <> excluded.count`
}

interface Lease {
  /** The database's clock when the lease was taken: the hours of the pass are counted from it. */
  now: Date
  /** When the last pass over every hour finished; null: never (the rollup is empty). */
  fullRefreshedAt: Date | null
}

/**
 * One refresher (a replica's): takes the lease, refreshes, hands it back. Replicas share the
 * lease row, so while one refreshes the others' passes are skipped.
 */
export class StatsRefresher {
  readonly holder = randomUUID()
  private stopping = false

  constructor(
    private readonly db: Db,
    private readonly opts: { fullEveryMs: number; recentEveryMs: number; chunkHours: number },
  ) {}

  /**
   * One pass: the current and previous hour; and, when the last full pass is older than
   * `fullEveryMs` (or there never was one), every older hour of the windows, `chunkHours` a
   * statement, newest first, with the recent hours again every `recentEveryMs` meanwhile; then
   * hours past the windows are deleted. Answers what it did: 'skipped' when another refresher
   * holds the lease, 'lost' when it lost it midway (too slow: the other one goes on), 'stopped'
   * when `stop()` ended the full pass early (the next one starts it again).
   */
  async refresh(): Promise<'skipped' | 'recent' | 'full' | 'lost' | 'stopped'> {
    const lease = await this.take()
    if (!lease) return 'skipped'
    try {
      await refreshRange(this.db, recentHours(lease.now))
      const due =
        lease.fullRefreshedAt === null ||
        lease.now.getTime() - lease.fullRefreshedAt.getTime() >= this.opts.fullEveryMs
      if (!due) return 'recent'
      // The database's clock, moved on by the time the pass has taken.
      const started = performance.now()
      const now = () => new Date(lease.now.getTime() + (performance.now() - started))
      let recentAt = started
      let renewedAt = started
      for (const range of olderHours(lease.now, this.opts.chunkHours)) {
        if (this.stopping) return 'stopped'
        await refreshRange(this.db, range)
        if (performance.now() - renewedAt >= (LEASE_SECONDS * 1000) / 4) {
          if (!(await this.renew())) return 'lost'
          renewedAt = performance.now()
        }
        if (performance.now() - recentAt >= this.opts.recentEveryMs) {
          await refreshRange(this.db, recentHours(now()))
          recentAt = performance.now()
        }
      }
      const at = lease.now.toISOString()
      await this.db.$executeRaw`
        DELETE FROM email_status_hours
        WHERE hour < ${at}::timestamptz - make_interval(hours => ${ROLLUP_HOURS}::int)`
      const done = await this.db.$executeRaw`
        UPDATE email_stats_refresh SET full_refreshed_at = ${at}::timestamptz
        WHERE id = ${ROW} AND holder = ${this.holder}`
      return done === 1 ? 'full' : 'lost'
    } finally {
      await this.release()
    }
  }

  /** Ends a full pass after the statement in flight: a shutdown does not wait for all of it. */
  stop(): void {
    this.stopping = true
  }

  /**
   * Takes the lease if it is free, run out, or already ours: one statement, which also makes the
   * row on a fresh database (of two replicas making it at once, the second finds it held).
   */
  private async take(): Promise<Lease | null> {
    const rows = await this.db.$queryRaw<Array<{ now: Date; fullRefreshedAt: Date | null }>>`
      INSERT INTO email_stats_refresh AS r (id, holder, lease_until)
      VALUES (${ROW}, ${this.holder}, now() + make_interval(secs => ${LEASE_SECONDS}::int))
      ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until
      WHERE r.lease_until IS NULL OR r.lease_until < now() OR r.holder = excluded.holder
      RETURNING now() AS now, r.full_refreshed_at AS "fullRefreshedAt"`
    return rows[0] ?? null
  }

  /** Extends the lease if still ours; false when it ran out and another refresher took it. */
  private async renew(): Promise<boolean> {
    const n = await this.db.$executeRaw`
      UPDATE email_stats_refresh SET lease_until = now() + make_interval(secs => ${LEASE_SECONDS}::int)
      WHERE id = ${ROW} AND holder = ${this.holder}`
    return n === 1
  }

  private async release(): Promise<void> {
    await this.db.$executeRaw`
      UPDATE email_stats_refresh SET lease_until = NULL WHERE id = ${ROW} AND holder = ${this.holder}`
  }
}

/**
 * The stats refresher of this replica: a pass at start (on a fresh database or after the upgrade
 * that added the rollup, the full one: GET /v1/admin/stats counts from it), then one every
 * STATS_REFRESH_SECONDS, the full pass when STATS_FULL_REFRESH_SECONDS have gone by since the
 * last one, whichever replica ran it.
 */
export function startStatsRefresher(ctx: EmailContext): Loop {
  const { rt } = ctx
  const refresher = new StatsRefresher(rt.db, {
    fullEveryMs: rt.env.STATS_FULL_REFRESH_SECONDS * 1000,
    recentEveryMs: rt.env.STATS_REFRESH_SECONDS * 1000,
    chunkHours: rt.env.STATS_REFRESH_CHUNK_HOURS,
  })
  const passes = rt.metrics.counter(
    'stats_refresh_total',
    'Passes of the stats refresher, by outcome (recent, full, skipped: another replica holds the lease, lost, stopped)',
    ['outcome'],
  )
  const pass = async (): Promise<void> => {
    const outcome = await refresher.refresh()
    passes.inc({ outcome })
    if (outcome === 'full') rt.logger.debug('stats rollup refreshed over every hour')
  }
  const loop = every(rt.env.STATS_REFRESH_SECONDS * 1000, 'stats refresh', rt.logger, pass, { now: true })
  return {
    async stop() {
      refresher.stop()
      await loop.stop()
    },
  }
}
