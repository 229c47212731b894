import type { Db } from '@mailer/db'
import { every, type Logger, type Loop } from '@mailer/observability'
import {
  deleteChunk,
  disabledWithPending,
  failPendingChunk,
  LEFTOVER_CHUNK,
  orphanedWebhooks,
} from './leftover-deliveries.js'

export interface CleanupOptions {
  /** How long a disabling or a deletion waits for its deliveries' work before it answers. */
  waitMs: number
  /** How often every replica sweeps up what a stopped replica left (and once at start). */
  sweepEveryMs: number
  chunk?: number
}

/**
 * The deliveries of a webhook disabled (pending ones fail) or deleted (all go), in chunks after the
 * webhook's own change has committed. Done in the change's transaction, a backlog of a few hundred
 * thousand outlasted its time limit: the change answered 500 and was rolled back, every time.
 *
 * The request waits for the work up to `waitMs` (a usual backlog is done by then, so the
 * deliveries read right after the answer are as before); the rest goes on in the background. What
 * a replica leaves when it stops or crashes meanwhile is covered twice: a claim fails (disabled,
 * no attempt counted: delivery-claim-sql.ts) and the worker deletes (gone) any such delivery
 * found due, so due ones end as they fall due, and every replica sweeps at start and every
 * `sweepEveryMs` for disabled webhooks with pending deliveries and deliveries of webhooks that
 * are gone, which ends the rest (retries not due yet, finished deliveries of a deleted webhook,
 * which nothing else would ever delete).
 */
export class DeliveryCleanup {
  private readonly inHand = new Set<Promise<void>>()
  private readonly chunk: number
  private sweeps: Loop | undefined
  private stopping = false

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly opts: CleanupOptions,
  ) {
    this.chunk = opts.chunk ?? LEFTOVER_CHUNK
  }

  start(): void {
    // The first sweep at start ends what a stopped replica left.
    this.sweeps = every(this.opts.sweepEveryMs, 'webhook-leftover-sweep', this.logger, () => this.sweep(), {
      now: true,
    })
  }

  /**
   * The webhook was disabled: its deliveries created up to `before` (PostgreSQL's clock, read in
   * the disabling's transaction) that are still pending fail. Never throws.
   */
  afterDisable(webhookId: string, before: string): Promise<void> {
    return this.within(
      this.untilDone(() => failPendingChunk(this.db, webhookId, before, this.chunk)),
      'failing pending deliveries of a disabled webhook failed; the sweep or the worker ends them',
      webhookId,
    )
  }

  /** The webhook was deleted: its deliveries go, with the payloads only they needed. Never throws. */
  afterDelete(webhookId: string, projectId: string): Promise<void> {
    return this.within(
      this.untilDone(() => deleteChunk(this.db, webhookId, projectId, this.chunk)),
      'deleting the deliveries of a deleted webhook failed; the sweep deletes them',
      webhookId,
    )
  }

  /** Disabled webhooks' pending deliveries and gone webhooks' deliveries, left by a replica that stopped. */
  async sweep(): Promise<void> {
    let failed = 0
    let deleted = 0
    for (const w of await disabledWithPending(this.db))
      failed += await this.untilDone(() => failPendingChunk(this.db, w.id, w.at, this.chunk))
    for (const w of await orphanedWebhooks(this.db))
      deleted += await this.untilDone(() => deleteChunk(this.db, w.webhookId, w.projectId, this.chunk))
    if (failed + deleted > 0)
      this.logger.info(
        { failed, deleted },
        'ended the deliveries of disabled or deleted webhooks that an earlier run left',
      )
  }

  /** Chunks until one finds fewer than a chunk's worth; at most the chunk in flight once stopping. */
  private async untilDone(step: () => Promise<number>): Promise<number> {
    let total = 0
    for (let n = this.chunk; n === this.chunk && !this.stopping; ) {
      n = await step()
      total += n
    }
    return total
  }

  /** Waits for `work` at most `waitMs`; it goes on in the background past that. */
  private async within(work: Promise<unknown>, failure: string, webhookId: string): Promise<void> {
    const done = this.track(work, failure, webhookId)
    let timer: NodeJS.Timeout | undefined
    await Promise.race([done, new Promise<void>((r) => (timer = setTimeout(r, this.opts.waitMs)))])
    clearTimeout(timer)
  }

  private track(work: Promise<unknown>, failure: string, webhookId?: string): Promise<void> {
    const p: Promise<void> = work
      .then(() => undefined)
      .catch((err) => this.logger.warn({ err, webhookId }, failure))
      .finally(() => this.inHand.delete(p))
    this.inHand.add(p)
    return p
  }

  /** No more chunks; waits for those in flight (the caller bounds the wait: rt.dbWaits). */
  async stop(): Promise<void> {
    this.stopping = true
    await this.sweeps?.stop()
    await Promise.allSettled([...this.inHand])
  }
}
