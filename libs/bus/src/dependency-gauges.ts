import { setTimeout as sleep } from 'node:timers/promises'
import { type Db, pingDb } from '@mailer/db'
import type { Metrics } from '@mailer/observability'

/** PostgreSQL is pinged this often, unless /readyz (probed every 5 s in the chart) just did. */
export const DB_CHECK_MS = 5_000
/**
 * A ping not answered by then counts as down: a hung database never holds /readyz past the
 * kubelet's 3-second probe timeout, and never holds a scrape at all (it reads the last answer).
 */
export const DB_PING_TIMEOUT_MS = 2_000

/**
 * What /readyz sees, as metrics (`mailer_<service>_dependency_up{dependency}` and
 * `mailer_<service>_ready`): Prometheus keeps scraping a pod that runs but is not ready, so
 * without them nothing said that a service had lost NATS or PostgreSQL, nor which one.
 * NATS is read off the connection (its status events keep `bus.isConnected`), PostgreSQL from
 * the last ping, never from a query made by the scrape.
 */
export class DependencyWatch {
  /** Unknown (no sample) until the first ping answers. */
  private dbUp: boolean | undefined
  private natsUp = false
  private lastCheckAt = 0
  /** The check in progress, which /readyz and the timer share. */
  private checking: Promise<boolean> | null = null
  /** The ping itself, which may outlive its timeout: no second one is queued behind it. */
  private pinging: Promise<boolean> | null = null
  private stopped = false
  private readonly timer: NodeJS.Timeout

  constructor(
    private readonly db: Db,
    metrics: Metrics,
    /** Connected to NATS right now. */
    private readonly natsConnected: () => boolean,
    /** Wired and not draining: ready once both dependencies are up. */
    private readonly serving: () => boolean,
  ) {
    const watch = this
    metrics.gauge(
      'dependency_up',
      '1 while this process reaches the dependency (nats, postgresql), 0 while it does not',
      ['dependency'],
      function collect() {
        // A drain closes the NATS connection on purpose: the gauge keeps what it last saw.
        if (!watch.stopped) watch.natsUp = watch.natsConnected()
        this.set({ dependency: 'nats' }, watch.natsUp ? 1 : 0)
        if (watch.dbUp !== undefined) this.set({ dependency: 'postgresql' }, watch.dbUp ? 1 : 0)
      },
    )
    metrics.gauge(
      'ready',
      '1 while /readyz would answer 200: wired, not draining, NATS and PostgreSQL reached',
      [],
      function collect() {
        this.set(watch.serving() && watch.natsConnected() && watch.dbUp === true ? 1 : 0)
      },
    )
    void this.checkDb()
    this.timer = setInterval(() => {
      if (Date.now() - this.lastCheckAt >= DB_CHECK_MS) void this.checkDb()
    }, DB_CHECK_MS)
    this.timer.unref()
  }

  /** Pings PostgreSQL (joining a check in progress), at most DB_PING_TIMEOUT_MS, and records the answer. */
  checkDb(): Promise<boolean> {
    if (this.checking) return this.checking
    this.lastCheckAt = Date.now()
    this.checking = this.ping().finally(() => {
      this.checking = null
    })
    return this.checking
  }

  /** No more pings (before the pool closes); the gauges keep their last values. */
  stop(): void {
    this.stopped = true
    clearInterval(this.timer)
  }

  private async ping(): Promise<boolean> {
    // The last ping still hangs: the database has not answered since, so it is still down.
    let up = false
    if (!this.pinging) {
      const p = pingDb(this.db)
      this.pinging = p
      void p.finally(() => {
        if (this.pinging === p) this.pinging = null
      })
      up = await Promise.race([p, sleep(DB_PING_TIMEOUT_MS, false, { ref: false })])
    }
    if (!this.stopped) this.dbUp = up
    return up
  }
}
