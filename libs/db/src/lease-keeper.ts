/**
 * A row claimed under a lease. `lease` is the lease's end as PostgreSQL wrote it (`locked_until`
 * as text): it is the fencing token, so a write of a claim that lost its lease matches nothing.
 */
/**
 * After a renewal that failed (the database out of reach or slow), the next is tried this soon, or
 * at the usual pace if that is sooner: the leases run out meanwhile (as the dispatcher's ClaimKeeper).
 */
export const RETRY_AFTER_ERROR_MS = 1_000

export interface Leased {
  lease: string
}

export interface LeaseKeeperOptions<T extends Leased> {
  /** How long each renewal extends a lease (from the database's now). */
  leaseMs: number
  /** How often every held lease is renewed: well within `leaseMs`, so a late renewal is survived. */
  everyMs: number
  /**
   * Renews every row given, in ONE statement, each only if its lease is still `row.lease`; answers
   * the new token of each row, in order, or null for a row whose lease is gone (finished, handed
   * back, taken over after running out).
   */
  renew(rows: T[], leaseMs: number): Promise<Array<string | null>>
  /** A renewal failed (the leases run on; the next tick tries again). */
  onError(err: unknown): void
  /** A held row's lease was found gone: its holder must not start work on it. */
  onLost?(row: T): void
}

/**
 * Keeps the leases of the rows a replica holds (in memory or being worked on) from running out,
 * so that leases can be short: a replica that dies gives its rows up one short lease after its
 * last renewal, however long its work takes while it lives. Every `everyMs` one statement renews
 * them all (never one per row). Each renewal moves a row's token forward, in place; `release`
 * waits for a renewal in progress, so a result written after it carries the current token and no
 * renewal moves it meanwhile. The same scheme as the dispatcher's claims (ClaimKeeper) and the
 * heartbeats of JetStream messages (`heartbeatEveryMs`). Times are taken with the monotonic clock
 * (`performance.now()`), before the statement that set the lease: the database's now() is later.
 */
export class LeaseKeeper<T extends Leased> {
  /** Held rows, with when (performance.now(), before the statement that set it) each lease began. */
  private readonly held = new Map<T, number>()
  private timer: NodeJS.Timeout | undefined
  private renewing: Promise<void> = Promise.resolve()
  private running = false

  constructor(private readonly opts: LeaseKeeperOptions<T>) {}

  get leaseMs(): number {
    return this.opts.leaseMs
  }

  start(): void {
    if (this.running) return
    this.running = true
    this.schedule(this.opts.everyMs)
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.renewing = this.renewAll().then((next) => {
        if (this.running) this.schedule(next)
      })
    }, ms)
    this.timer.unref()
  }

  /** Keeps `row`'s lease from now on; `since`: performance.now() before the statement that leased it. */
  hold(row: T, since: number): void {
    this.held.set(row, since)
  }

  /** Whether `row` is held: not released, and its lease not found lost by a renewal. */
  holds(row: T): boolean {
    return this.held.has(row)
  }

  /**
   * How much of `row`'s lease is left as far as this replica knows (its last confirmed renewal),
   * or -Infinity if it is not held (released, or found lost).
   */
  leftMs(row: T): number {
    const since = this.held.get(row)
    return since === undefined ? Number.NEGATIVE_INFINITY : since + this.opts.leaseMs - performance.now()
  }

  /**
   * Stops renewing `rows`; resolves once a renewal in progress has ended, so `row.lease` is the
   * token the database has and stays so (the result or hand-back written next is fenced by it).
   */
  release(...rows: T[]): Promise<void> {
    for (const row of rows) this.held.delete(row)
    return this.renewing
  }

  /** One renewal of every held row; answers when the next is due. */
  private async renewAll(): Promise<number> {
    const rows = [...this.held.keys()]
    if (rows.length === 0) return this.opts.everyMs
    const at = performance.now()
    let tokens: Array<string | null>
    try {
      tokens = await this.opts.renew(rows, this.opts.leaseMs)
    } catch (err) {
      this.opts.onError(err)
      return Math.min(this.opts.everyMs, RETRY_AFTER_ERROR_MS)
    }
    for (const [i, row] of rows.entries()) {
      const token = tokens[i]
      // A row released meanwhile gets its new token too: its holder writes with it next.
      if (token) {
        row.lease = token
        if (this.held.has(row)) this.held.set(row, at)
      } else if (this.held.delete(row)) this.opts.onLost?.(row)
    }
    return this.opts.everyMs
  }

  /** No more renewals: the leases held run out (a simulated crash, or the end of a shutdown). */
  halt(): void {
    this.running = false
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
  }

  /** No more renewals, once the one in progress (if any) has ended. */
  async stop(): Promise<void> {
    this.halt()
    await this.renewing
  }
}
