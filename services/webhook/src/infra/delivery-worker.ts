import { setTimeout as sleep } from 'node:timers/promises'
import { heartbeatEveryMs, secondsToNanos } from '@mailer/bus'
import { WEBHOOK_HEADERS } from '@mailer/contracts'
import { LeaseKeeper } from '@mailer/db'
import type { Logger, Metrics } from '@mailer/observability'
import { deliveryBody } from '../domain/payload.js'
import { nextStep } from '../domain/retry-schedule.js'
import { signatureHeader } from '../domain/signature.js'
import { logFailedAttempt } from './attempt-log.js'
import { claimSize } from './claim-size.js'
import type { ClaimedDelivery, DeliveryStore } from './delivery-store.js'
import type { HttpSender } from './http-sender.js'
import { MissedChanges } from './missed-changes.js'
import { WaitingDeliveries } from './waiting-deliveries.js'
import type { WorkerOptions } from './worker-options.js'

/** Shortest time between two claims of one worker. */
const CLAIM_GAP_MS = 5
/** The `changedAt` mark of a hand-back of every project (no project id is empty). */
const EVERY_PROJECT = ''
/**
 * The lease of a claimed delivery. It is renewed every third of it (heartbeatEveryMs) while the
 * replica holds the delivery, in memory or in flight, so it only has to outlast two late renewals,
 * not the work: a replica that dies gives its deliveries up at most this long after its last
 * renewal, whatever the time-out and prefetch.
 */
export const WEBHOOK_LEASE_MS = 15_000
const RENEW_EVERY_MS = heartbeatEveryMs(secondsToNanos(WEBHOOK_LEASE_MS / 1000))
/**
 * The least lease a waiting delivery must have left (as last renewed) to start: enough to reach
 * the next renewal and one more try of it. Less means renewals are failing; started anyway, its
 * lease could run out while it is sent and another replica send it too.
 */
const START_MARGIN_MS = RENEW_EVERY_MS + 2_000

/**
 * The delivery loop. All state is in PostgreSQL: it claims due rows (`pending`, due, not leased)
 * with a lease, POSTs them, and records the result and the next attempt time, so retries survive
 * restarts and several replicas share the work. It runs when kicked (a new delivery, a finished
 * attempt), when the earliest pending retry falls due, and every `pollMs` in any case.
 */
export class DeliveryWorker {
  private readonly inflight = new Map<string, number>()
  private readonly queued = new WaitingDeliveries()
  /** Renews the leases of every delivery held, waiting in `queued` or in flight. */
  private readonly leases: LeaseKeeper<ClaimedDelivery>
  private readonly running = new Set<Promise<void>>()
  /** Requests to endpoints waiting for their answer (each bounded by the time-out). */
  private readonly sending = new Set<Promise<unknown>>()
  /** Hand-backs being written (`giveBack`): `stop` waits for them before the pool closes. */
  private readonly givingBack = new Set<Promise<void>>()
  private poller: NodeJS.Timeout | undefined
  private wake: NodeJS.Timeout | undefined
  private wakeAt = Number.POSITIVE_INFINITY
  private scheduled = false
  private ticking = false
  /** Settles when the claim loop running now (if any) has ended; `stop` waits for it. */
  private claiming: Promise<void> = Promise.resolve()
  private again = false
  private lastClaimAt = 0
  private stopped = false
  /**
   * Bumped by every hand-back, and each project's last one: a claim that was running when its
   * project's webhooks changed read them as they were, so its rows of that project go back too.
   */
  private generation = 0
  private readonly changedAt = new Map<string, number>()
  private readonly missed: MissedChanges
  private readonly attempts
  private readonly seconds

  constructor(
    private readonly store: DeliveryStore,
    private readonly sender: HttpSender,
    private readonly opts: WorkerOptions,
    private readonly logger: Logger,
    metrics: Metrics,
  ) {
    this.attempts = metrics.counter('attempts_total', 'Webhook delivery attempts, by outcome', ['outcome'])
    this.seconds = metrics.histogram(
      'attempt_seconds',
      'Duration of webhook delivery attempts',
      ['outcome'],
      [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    )
    for (const o of ['success', 'failure', 'timeout', 'blocked']) this.attempts.inc({ outcome: o }, 0)
    this.missed = new MissedChanges(opts.link)
    this.leases = new LeaseKeeper<ClaimedDelivery>({
      leaseMs: WEBHOOK_LEASE_MS,
      everyMs: RENEW_EVERY_MS,
      renew: (rows, leaseMs) => this.store.renew(rows, leaseMs),
      onError: (err) => {
        if (this.opts.alive())
          this.logger.warn({ err }, 'renewing webhook delivery leases failed; will retry')
      },
      // A waiting delivery whose lease was lost (another replica may have it): forgotten, unsent.
      onLost: (row) => this.queued.remove(row),
    })
  }

  /**
   * Leases are short and renewed while held (LeaseKeeper), so a crashed replica's claims come back
   * soon whatever the time-out and prefetch. A result recorded after its lease was lost (renewals
   * failing longer than the lease) is dropped by the lease guard in `finish`, so the worst case is
   * a duplicate, which receivers tolerate.
   */
  get leaseMs(): number {
    return this.leases.leaseMs
  }

  /** Deliveries held per webhook: in flight plus waiting in memory. */
  private held(): Map<string, number> {
    const held = new Map(this.inflight)
    for (const [w, n] of this.queued.perWebhook()) held.set(w, (held.get(w) ?? 0) + n)
    return held
  }

  /** Starts waiting deliveries while their webhook and the replica have free slots. */
  private pump(webhookId: string): void {
    while (
      this.running.size < this.opts.concurrency &&
      (this.inflight.get(webhookId) ?? 0) < this.opts.perWebhook
    ) {
      const row = this.queued.shift(webhookId)
      if (!row) break
      // Too little lease left to be sure of renewing it during the attempt (renewals have been
      // failing): leave it to run out and the row to be claimed again (under the same attempt
      // number), rather than risk a second replica sending it at the same time.
      if (this.leases.leftMs(row) < START_MARGIN_MS) {
        void this.leases.release(row)
        continue
      }
      this.launch(row)
    }
  }

  private pumpAll(): void {
    for (const w of this.queued.webhooks()) this.pump(w)
  }

  start(): void {
    this.poller = setInterval(() => this.kick(), this.opts.pollMs)
    this.leases.start()
    this.kick()
  }

  /** Look for due work now (coalesced: many kicks in one turn make one claim). */
  kick(): void {
    if (this.stopped || this.scheduled) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      void this.tick()
    })
  }

  private async tick(): Promise<void> {
    if (this.stopped) return
    if (!this.opts.alive()) {
      await this.halt()
      return
    }
    if (this.ticking) {
      this.again = true
      return
    }
    this.ticking = true
    let ended!: () => void
    this.claiming = new Promise((resolve) => {
      ended = resolve
    })
    try {
      do {
        this.again = false
        // Under load every answered delivery frees a slot and asks for a claim; spacing claims a
        // few milliseconds apart lets one claim fill all the slots freed meanwhile instead of one
        // claim per delivery (an idle worker claims at once: the last claim is long past).
        const wait = this.lastClaimAt + CLAIM_GAP_MS - Date.now()
        if (wait > 0) await sleep(wait)
        if (this.stopped) break
        const { limit, perWebhook } = claimSize(this.opts, this.running.size, this.queued.size)
        if (limit <= 0) break
        this.lastClaimAt = Date.now()
        // Sent before the claim: the lease began no earlier (the database's now() is later).
        const claimedAt = performance.now()
        const before = this.generation
        const mark = this.missed.mark()
        const claimed = await this.store.claim(limit, this.held(), perWebhook, this.leaseMs)
        // Stopped while the claim ran: its rows go back unattempted. Sent now, they went out on a
        // sender being closed (an attempt counted for a request the receiver never got) or waited
        // in memory, unsent, until their leases ran out.
        if (this.stopped) {
          await this.giveBack(claimed, null)
          break
        }
        const changed = (row: ClaimedDelivery) =>
          Math.max(this.changedAt.get(row.projectId) ?? 0, this.changedAt.get(EVERY_PROJECT) ?? 0) > before
        const stale = claimed.filter(changed)
        const rows = stale.length ? claimed.filter((row) => !changed(row)) : claimed
        // Only a claim in flight compares against these marks, and this was the one.
        this.changedAt.clear()
        for (const row of rows) {
          this.queued.push(row)
          this.leases.hold(row, claimedAt)
          this.missed.claimed(row, mark)
        }
        this.pumpAll()
        // Only once the others wait in memory: a stop or a change of their project arriving while
        // these go back finds them there. Queued after it, they went out after a stop (on a sender
        // being closed) or waited unsent until their leases ran out, and a change missed them.
        if (stale.length) await this.giveBack(stale, null)
        if (rows.length < limit && !this.stopped) await this.planWake()
      } while (this.again && !this.stopped)
    } catch (err) {
      if (this.opts.alive()) this.logger.warn({ err }, 'webhook delivery claim failed; will retry')
    } finally {
      this.ticking = false
      ended()
    }
  }

  /** Sets a timer for the earliest pending retry so it goes out on time, not at the next poll. */
  private async planWake(): Promise<void> {
    const at = await this.store.nextDueAt()
    if (!at) return
    const when = Math.max(at.getTime(), Date.now() + 20)
    if (when >= this.wakeAt && this.wake) return
    if (when - Date.now() > this.opts.pollMs) return
    if (this.wake) clearTimeout(this.wake)
    this.wakeAt = when
    this.wake = setTimeout(() => {
      this.wake = undefined
      this.wakeAt = Number.POSITIVE_INFINITY
      this.kick()
    }, when - Date.now())
  }

  /**
   * Runs one attempt. The webhook's slot is given back as soon as the endpoint has answered, not
   * when the result is recorded: per-endpoint concurrency bounds the requests an endpoint has to
   * serve at once, and waiting for the write as well made every slot's turn a database round trip
   * longer (bench/README.md). The row stays leased until the result is written, so it cannot be
   * claimed again meanwhile.
   */
  private launch(row: ClaimedDelivery): void {
    this.inflight.set(row.webhookId, (this.inflight.get(row.webhookId) ?? 0) + 1)
    let released = false
    const release = () => {
      if (released) return
      released = true
      const n = (this.inflight.get(row.webhookId) ?? 1) - 1
      if (n <= 0) this.inflight.delete(row.webhookId)
      else this.inflight.set(row.webhookId, n)
      this.pump(row.webhookId)
      this.kick()
    }
    const p = this.attempt(row, release)
      .catch((err) =>
        this.logger.error(
          { err, deliveryId: row.id },
          'webhook attempt could not be recorded; the lease will bring it back',
        ),
      )
      .finally(() => {
        release()
        void this.leases.release(row)
        this.running.delete(p)
        this.pumpAll()
        this.kick()
      })
    this.running.add(p)
  }

  private async attempt(row: ClaimedDelivery, answered: () => void): Promise<void> {
    const hook = this.missed.mayHaveMissed(row) ? await this.store.webhookNow(row.webhookId) : row
    // Written at once: no renewal may move the lease token under the write.
    if (!hook.enabled || hook.url === null || hook.secret === null) await this.leases.release(row)
    if (hook.enabled === null || hook.url === null || hook.secret === null) {
      await this.store.remove(row.id, row.projectId)
      return
    }
    if (!hook.enabled) {
      await this.store.failUnsent(row)
      return
    }
    const body = deliveryBody(row.payload)
    // Signed with the secret read by the claim; a change of the webhook hands back the deliveries
    // waiting in memory (handBack), so a rotation applies to every attempt that starts after it.
    const headers = {
      'Content-Type': 'application/json',
      'User-Agent': WEBHOOK_HEADERS.userAgent,
      [WEBHOOK_HEADERS.signature]: signatureHeader(hook.secret, body),
      [WEBHOOK_HEADERS.eventId]: row.eventId,
      [WEBHOOK_HEADERS.deliveryId]: row.id,
    }
    const end = this.seconds.startTimer()
    const sent = this.sender.post(hook.url, body, headers)
    this.sending.add(sent)
    let result: Awaited<typeof sent>
    try {
      result = await sent
    } finally {
      this.sending.delete(sent)
    }
    answered()
    end({ outcome: result.outcome })
    this.attempts.inc({ outcome: result.outcome })
    const step = nextStep(row.attempt, result.outcome, this.opts.schedule)
    // Renewed up to now; the result is written with the token the last renewal left.
    await this.leases.release(row)
    await this.store.finish(row, result, step)
    if (result.outcome !== 'success') logFailedAttempt(this.logger, row, result, step)
  }

  /**
   * A project's webhooks changed (URL, secret, enabled, deleted): the deliveries of that project
   * waiting in memory carry the webhook as it was when they were claimed, so they are handed back
   * and claimed again with the webhook as it is now, and so are that project's rows of a claim
   * running meanwhile (it may have read the webhook before the change). A rotated secret thus
   * signs every attempt that starts after the rotation, as without prefetching. Without a
   * project, every project's (a reconnect: changes broadcast meanwhile never arrived). Never throws.
   */
  async handBack(projectId?: string): Promise<void> {
    this.generation++
    this.changedAt.set(projectId ?? EVERY_PROJECT, this.generation)
    const rows = this.queued.takeWhere((row) => projectId === undefined || row.projectId === projectId)
    await this.giveBack(rows, projectId ?? null)
    this.kick()
  }

  /**
   * Claimed rows back to the table unattempted; never throws (their leases run out instead).
   * Tracked for `stop`: a hand-back a change started (another replica's broadcast, or this one's
   * own coming back over NATS) may still be writing when the replica stops, and the pool closed
   * under it left its rows leased with their claim's attempt counted, for good when the webhook's
   * disabling had failed them meanwhile (a delivery never sent showed an attempt).
   */
  private giveBack(rows: ClaimedDelivery[], projectId: string | null): Promise<void> {
    const p: Promise<void> = this.handOver(rows, projectId).finally(() => this.givingBack.delete(p))
    this.givingBack.add(p)
    return p
  }

  private async handOver(rows: ClaimedDelivery[], projectId: string | null): Promise<void> {
    try {
      await this.leases.release(...rows)
      await this.store.unclaim(rows)
    } catch (err) {
      // Their leases run out instead; they are claimed again then.
      this.logger.warn({ err, projectId }, 'could not hand back claimed webhook deliveries')
    }
  }

  /**
   * Stop claiming; attempts in flight finish (bounded by the time-out) and are recorded, and the
   * deliveries waiting in memory, and those of a claim running now, are handed back at once rather
   * than when their leases run out. The database gets the shutdown's database waits past the last
   * endpoint's answer: a hung one held the shutdown on its claim or writes until the pod's
   * deadline, which then exited 1 without draining NATS.
   */
  async stop(): Promise<void> {
    this.stopped = true
    this.clearTimers()
    const waiting = this.queued.takeWhere()
    const handedBack = this.leases.release(...waiting).then(() => this.store.unclaim(waiting))
    // The attempts in flight keep their leases renewed until their results are written.
    const done = Promise.allSettled([...this.running, handedBack, this.claiming, ...this.givingBack])
    await Promise.allSettled([...this.sending])
    if (!(await this.opts.dbWaits.within(done)))
      this.logger.warn('database did not answer in time; webhook deliveries in hand are left to their leases')
    this.leases.halt()
  }

  /** The connections are gone: no more renewals either, the leases run out as a crash's do. */
  private async halt(): Promise<void> {
    this.stopped = true
    this.clearTimers()
    this.leases.halt()
  }

  private clearTimers(): void {
    if (this.poller) clearInterval(this.poller)
    if (this.wake) clearTimeout(this.wake)
    this.poller = undefined
    this.wake = undefined
  }
}
