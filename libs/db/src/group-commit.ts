import { isDatabaseUnavailable } from './unavailable.js'

export interface GroupCommitOptions<Req> {
  /** Write transactions in flight at once. */
  slots: number
  /** Items per combined write, at most (a single larger item still goes alone). */
  maxItems: number
  /** How many items a request counts for (a batch send is many emails); 1 by default. */
  sizeOf?: (req: Req) => number
  /**
   * A slot beyond the first is used only when at least this many items wait (0, the default:
   * always). A second concurrent write pays off for big requests (batches), whose statements take
   * long enough to leave the machine idle meanwhile; for single sends it only splits the group
   * and doubles the statements (accept: 12-17 % more sends/s with one slot, 10 % fewer batch
   * emails/s; the dispatcher's claims and outcomes, the webhook fan-out and results: +8 to +43 %;
   * bench/README.md).
   */
  extraSlotAt?: number
}

interface Pending<Req, Res> {
  req: Req
  resolve: (r: Res) => void
  reject: (e: unknown) => void
}

/**
 * Group commit: requests that arrive while every write slot is busy wait and are then written
 * together, by one call of `writeMany` (one transaction, multi-row statements, one fsync). An idle
 * writer adds no delay (a request is written at once when a slot is free), and throughput grows
 * with concurrency instead of being capped by commits per second. `writeMany` answers one result
 * per request, in order. A combined write that fails is retried request by request, so a bad
 * request fails only itself; one that fails because the database is away (isDatabaseUnavailable)
 * fails every request of the group at once, since each would fail alone the same way.
 *
 * Used on every hot path that writes per message: accepts (email service), delivery outcomes and
 * claims (dispatcher), webhook attempt results (webhook service); measured in bench/README.md.
 */
export class GroupCommit<Req, Res> {
  private queue: Array<Pending<Req, Res>> = []
  /** Items (by sizeOf) in the queue. */
  private queuedItems = 0
  private inflight = 0
  private readonly sizeOf: (req: Req) => number

  constructor(
    private readonly writeMany: (reqs: Req[]) => Promise<Res[]>,
    private readonly opts: GroupCommitOptions<Req>,
  ) {
    this.sizeOf = opts.sizeOf ?? (() => 1)
  }

  submit(req: Req): Promise<Res> {
    return new Promise((resolve, reject) => {
      this.queue.push({ req, resolve, reject })
      this.queuedItems += this.sizeOf(req)
      this.pump()
    })
  }

  /** Requests waiting for a slot (not yet being written). */
  get waiting(): number {
    return this.queue.length
  }

  private pump(): void {
    while (this.inflight < this.opts.slots && this.queue.length > 0) {
      if (this.inflight > 0 && this.queuedItems < (this.opts.extraSlotAt ?? 0)) break
      const batch = this.take()
      this.inflight++
      void this.write(batch).finally(() => {
        this.inflight--
        this.pump()
      })
    }
  }

  private take(): Array<Pending<Req, Res>> {
    let items = 0
    let n = 0
    while (n < this.queue.length) {
      const size = this.sizeOf(this.queue[n]!.req)
      if (n > 0 && items + size > this.opts.maxItems) break
      items += size
      n++
    }
    this.queuedItems -= items
    return this.queue.splice(0, n)
  }

  private async write(batch: Array<Pending<Req, Res>>): Promise<void> {
    try {
      const results = await this.writeMany(batch.map((p) => p.req))
      if (results.length !== batch.length)
        throw new Error(`writeMany answered ${results.length} results for ${batch.length} requests`)
      for (const [i, p] of batch.entries()) p.resolve(results[i]!)
    } catch (err) {
      // Alone, each request of a group would only fail again against a database that is away,
      // after a round trip (or a connect timeout) of its own: N more failing tries per group.
      if (batch.length === 1 || isDatabaseUnavailable(err)) {
        for (const p of batch) p.reject(err)
        return
      }
      await Promise.all(
        batch.map(async (p) => {
          try {
            const [r] = await this.writeMany([p.req])
            p.resolve(r!)
          } catch (e) {
            p.reject(e)
          }
        }),
      )
    }
  }
}
