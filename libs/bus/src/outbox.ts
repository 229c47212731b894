import type { Db } from '@mailer/db'
import type { Logger, Metrics } from '@mailer/observability'
import type { Bus } from './bus.js'
import { encodeJson } from './codec.js'
import type { OutboxRow } from './outbox-sql.js'
import { DEFAULT_REQUEST_TIMEOUT_MS } from './requests.js'
import { UnpublishableMessage } from './unpublishable.js'

export interface OutboxMessage {
  subject: string
  msgId: string
  payload: unknown
}

/** Anything with Prisma's `outboxMessage` delegate: the client or a transaction. */
type OutboxWriter = Pick<Db, 'outboxMessage'>

/** Rows a sweeper pass publishes (together) and deletes in one transaction. */
const SWEEP_BATCH = 500

/**
 * Transactional outbox. `write` inserts messages in the caller's transaction; after the commit,
 * `publish` sends them to JetStream at once and deletes them in batches. A sweeper re-publishes
 * rows left behind by a process that died between commit and publish (older than `graceMs`), so
 * a committed state change always reaches its stream. JetStream de-duplicates on `msgId` within
 * its window and consumers are idempotent, so a re-publish is harmless.
 */
export class Outbox {
  private toDelete: bigint[] = []
  private readonly inFlight = new Set<Promise<void>>()
  private timer: NodeJS.Timeout | undefined
  private sweeping = false
  /**
   * Rows over NATS's max_payload: the sweeper passes over them (they would otherwise stop every
   * pass at the first of them, and every row after it would wait for good) and keeps them, so
   * that they go out once the operator raises the limit and the service restarts.
   */
  private readonly unpublishable = new Set<bigint>()
  private readonly published
  private readonly failures
  private readonly oversized

  constructor(
    private readonly db: Db,
    private readonly bus: Bus,
    private readonly logger: Logger,
    metrics: Metrics,
    private readonly opts: { graceMs?: number; sweepEveryMs?: number } = {},
  ) {
    this.published = metrics.counter('outbox_published_total', 'Outbox messages published to JetStream', [
      'path',
    ])
    this.failures = metrics.counter(
      'outbox_publish_failures_total',
      'Outbox publishes that failed (retried by the sweeper)',
    )
    this.oversized = metrics.counter(
      'outbox_unpublishable_total',
      "Outbox messages over NATS's max_payload, kept but passed over until it is raised",
    )
  }

  /** Inserts the messages in `tx`; returns rows to hand to `publish` after the commit. */
  async write(tx: OutboxWriter, messages: OutboxMessage[]): Promise<OutboxRow[]> {
    if (messages.length === 0) return []
    const rows = await tx.outboxMessage.createManyAndReturn({
      data: messages.map((m) => ({ subject: m.subject, msgId: m.msgId, payload: m.payload as object })),
      select: { id: true, subject: true, msgId: true, payload: true },
    })
    return rows as OutboxRow[]
  }

  /**
   * After the commit: publish now (a failure leaves the row for the sweeper). Never rejects, so
   * a caller with nothing left to do may leave it running (`void outbox.publish(rows)`): the
   * dispatcher frees its slot for the next email instead of waiting for JetStream's acks, and
   * `stop()` still waits for every publish under way.
   */
  publish(rows: OutboxRow[]): Promise<void> {
    const p = this.publishNow(rows)
    this.inFlight.add(p)
    void p.finally(() => this.inFlight.delete(p))
    return p
  }

  private async publishNow(rows: OutboxRow[]): Promise<void> {
    await Promise.all(
      rows.map(async (r) => {
        try {
          await this.bus.publishDurable(this.bus.subject(r.subject), encodeJson(r.payload), r.msgId)
          this.published.inc({ path: 'direct' })
          this.toDelete.push(r.id)
        } catch (err) {
          this.failures.inc()
          this.logger.warn({ err, msgId: r.msgId }, 'outbox publish failed; the sweeper will retry')
        }
      }),
    )
    if (this.toDelete.length >= 500) await this.flushDeletes()
  }

  start(): void {
    this.timer = setInterval(() => {
      void this.tick()
    }, this.opts.sweepEveryMs ?? 1_000)
  }

  private async tick(): Promise<void> {
    await this.flushDeletes()
    if (this.sweeping) return
    this.sweeping = true
    try {
      await this.sweep()
    } catch (err) {
      this.logger.warn({ err }, 'outbox sweep failed')
    } finally {
      this.sweeping = false
    }
  }

  /**
   * Publishes rows older than the grace period; returns how many it published. A pass publishes its
   * rows all at once, as `publish` does: one at a time, a pass of 500 took 500 round trips to NATS,
   * over the transaction's time limit on a path of 10 ms or more (a NATS in another zone, or busy
   * catching up after an outage), so it was rolled back after publishing and never deleted
   * anything: the next pass published the same rows, and those behind them never went out.
   */
  async sweep(): Promise<number> {
    const grace = this.opts.graceMs ?? 5_000
    let total = 0
    for (;;) {
      const n = await this.db.$transaction(
        async (tx) => {
          const rows = await tx.$queryRawUnsafe<OutboxRow[]>(
            `SELECT id, subject, msg_id AS "msgId", payload FROM outbox
             WHERE created_at < now() - ($1::int * interval '1 millisecond') AND id <> ALL($2::bigint[])
             ORDER BY id LIMIT ${SWEEP_BATCH} FOR UPDATE SKIP LOCKED`,
            grace,
            [...this.unpublishable],
          )
          const results = await Promise.allSettled(
            rows.map((r) =>
              this.bus.publishDurable(this.bus.subject(r.subject), encodeJson(r.payload), r.msgId),
            ),
          )
          const done: bigint[] = []
          let stopped = false
          for (const [i, res] of results.entries()) {
            const r = rows[i]!
            if (res.status === 'fulfilled') {
              this.published.inc({ path: 'sweeper' })
              done.push(r.id)
              continue
            }
            this.failures.inc()
            const err = res.reason
            if (err instanceof UnpublishableMessage) {
              this.unpublishable.add(r.id)
              this.oversized.inc()
              this.logger.error(
                { msgId: r.msgId, bytes: err.bytes, maxPayload: err.maxPayload },
                "outbox message is over NATS's max_payload; kept, passed over until the limit is raised",
              )
              continue
            }
            if (!stopped) this.logger.warn({ err, msgId: r.msgId }, 'outbox sweeper publish failed')
            stopped = true
          }
          if (done.length) await tx.$executeRawUnsafe('DELETE FROM outbox WHERE id = ANY($1::bigint[])', done)
          // Another pass only after a full one that NATS did not interrupt.
          return { done: done.length, more: !stopped && rows.length === SWEEP_BATCH }
        },
        // Each publish waits at most DEFAULT_REQUEST_TIMEOUT_MS, and they run together.
        { timeout: DEFAULT_REQUEST_TIMEOUT_MS * 3 },
      )
      total += n.done
      if (!n.more) return total
    }
  }

  private async flushDeletes(): Promise<void> {
    if (this.toDelete.length === 0) return
    const ids = this.toDelete
    this.toDelete = []
    try {
      await this.db.$executeRawUnsafe('DELETE FROM outbox WHERE id = ANY($1::bigint[])', ids)
    } catch (err) {
      this.toDelete.push(...ids)
      this.logger.warn({ err }, 'outbox delete failed; will retry')
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    await Promise.all(this.inFlight)
    await this.flushDeletes()
  }
}
