import type { PgPool } from '@mailer/db'
import { type StoreRequest, type StoreResult, storeMany } from './accept-store.js'

interface Pending {
  req: StoreRequest
  resolve: (r: StoreResult) => void
  reject: (e: unknown) => void
}

export interface WriterOptions {
  /** Write transactions in flight at once. */
  slots: number
  /** Emails per combined transaction, at most (a single larger request still goes alone). */
  maxEmails: number
}

/**
 * Group commit for the accept path. All sends of a project update the same counter rows, which
 * stay locked from the count to the commit (an fsync), so one transaction per request serialises a
 * project's requests behind each other's commits: measured ~150 sends/s whatever the concurrency
 * (bench/README.md). Here a request is written at once when a slot is free; requests arriving
 * while every slot is busy wait and are then written together in one transaction, with one count
 * per project, so throughput grows with concurrency and an idle service adds no delay. A combined
 * write that fails is retried request by request, so a bad request fails only itself.
 */
export class AcceptWriter {
  private queue: Pending[] = []
  private inflight = 0

  constructor(
    private readonly pool: PgPool,
    private readonly opts: WriterOptions = { slots: 2, maxEmails: 1_000 },
  ) {}

  store(req: StoreRequest): Promise<StoreResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ req, resolve, reject })
      this.pump()
    })
  }

  private pump(): void {
    while (this.inflight < this.opts.slots && this.queue.length > 0) {
      const batch = this.take()
      this.inflight++
      void this.write(batch).finally(() => {
        this.inflight--
        this.pump()
      })
    }
  }

  private take(): Pending[] {
    let emails = 0
    let n = 0
    while (n < this.queue.length) {
      const size = this.queue[n]!.req.emails.length
      if (n > 0 && emails + size > this.opts.maxEmails) break
      emails += size
      n++
    }
    return this.queue.splice(0, n)
  }

  private async write(batch: Pending[]): Promise<void> {
    try {
      const results = await storeMany(
        this.pool,
        batch.map((p) => p.req),
      )
      for (const [i, p] of batch.entries()) p.resolve(results[i]!)
    } catch (err) {
      if (batch.length === 1) {
        batch[0]!.reject(err)
        return
      }
      await Promise.all(
        batch.map(async (p) => {
          try {
            const [r] = await storeMany(this.pool, [p.req])
            p.resolve(r!)
          } catch (e) {
            p.reject(e)
          }
        }),
      )
    }
  }
}
