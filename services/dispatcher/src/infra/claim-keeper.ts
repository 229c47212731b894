import { type PgPool, RETRY_AFTER_ERROR_MS } from '@mailer/db'
import type { ClaimedEmail } from '../domain/claimed-email.js'

// After a refresh that failed, the next is tried within RETRY_AFTER_ERROR_MS, the pace of the
// leases' renewals (LeaseKeeper): the claim's life runs out meanwhile, and the final dot of its
// message only goes out while enough of it is left (`holds`).

export interface ClaimKeeperOptions {
  /** How often the claim is refreshed: a third of the ack wait, as `consume` keeps messages. */
  everyMs: number
  /** How old a claim is when another replica may take it over: the ack wait (CLAIM_SQL). */
  staleAfterMs: number
  /** The life the claim must have left, with no refresh at all, for the final dot to go out. */
  fenceMs: number
  /**
   * performance.now() taken before the claim was asked for: `claimed_at`, the database's now()
   * when the claim's statement started, is no earlier than that moment (but for its rounding to
   * the millisecond it is stored with: nothing against a fence of seconds).
   */
  askedAt: number
  /** A refresh found the claim no longer ours (taken over, or queued again by the email service). */
  onLost: () => void
  /** A refresh failed (it is tried again soon). */
  onError: (err: unknown) => void
}

/**
 * Keeps a claim fresh while its email is being sent, so that a send waiting behind a slow relay
 * is never mistaken for one whose dispatcher died (a claim is taken over once it is older than
 * the ack wait). Each refresh moves the fencing token (`claimedAt`) forward; `stop()` waits for a
 * refresh in progress so a release is written with the current token, and the outcome's write
 * goes through `finish`, which keeps refreshing the claim between its failed tries.
 *
 * It also tells whether the claim is still safely ours (`holds`), which the relay asks right
 * before the message's final dot, the step that cannot be taken back: a claim is ours until
 * `staleAfterMs` after the moment its latest successful claim or refresh was asked for (the
 * database stamped it no earlier), whatever happened since; one that a refresh found moved (taken
 * over, or queued again by the email service) is not ours at all. Only the two clocks' rates
 * matter, not their settings: our side is measured with the monotonic clock (the global
 * `performance`, the same as node:perf_hooks', which tests can fake).
 */
export class ClaimKeeper {
  private timer: NodeJS.Timeout | null = null
  private pending: Promise<void> = Promise.resolve()
  private stopped = false
  /** performance.now() before the latest claim or refresh the database confirmed. */
  private confirmedAt: number
  /** A refresh found the claim no longer ours: nothing more to refresh, nothing to send. */
  private lost = false
  /** The outcome's write is in flight (`finish`): a refresh falling due waits for it (`due`). */
  private writing = false
  private due = false

  constructor(
    private readonly pool: PgPool,
    private readonly email: Pick<ClaimedEmail, 'id' | 'claimedAt'>,
    private readonly opts: ClaimKeeperOptions,
  ) {
    this.confirmedAt = opts.askedAt
    this.schedule(opts.everyMs)
  }

  /**
   * True while the claim stays ours for at least `fenceMs` more even if no refresh succeeds from
   * now on. Once the final dot is out, the claim's remaining life (at least `fenceMs`) and the
   * refreshes that go on while the relay answers are what keep another replica from sending the
   * email again before the outcome is recorded (docs/api.md, "At-least-once").
   */
  holds(): boolean {
    return !this.lost && performance.now() + this.opts.fenceMs < this.confirmedAt + this.opts.staleAfterMs
  }

  /** A refresh found the claim moved (taken over, or queued again): no write with it can land. */
  isLost(): boolean {
    return this.lost
  }

  /**
   * Runs the write that ends the claim (the outcome, fenced by `claimedAt`) with no refresh under
   * it: a refresh committed while the write is in flight would move the token and the write would
   * find the claim "taken over". It waits for a refresh in progress, so the write reads the latest
   * token. Written (or found not ours), the keeper stops: no statement more than the write. Failed
   * (the database out of reach), refreshes resume, one that fell due meanwhile at once, so the
   * claim stays alive for the write's next try (docs/api.md, "At-least-once").
   */
  async finish<T>(write: () => Promise<T>): Promise<T> {
    this.writing = true
    try {
      await this.pending
      const out = await write()
      this.stopped = true
      if (this.timer) clearTimeout(this.timer)
      return out
    } catch (err) {
      this.writing = false
      if (this.due && !this.stopped && !this.lost) {
        this.due = false
        this.pending = this.refresh()
      }
      throw err
    }
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      if (this.writing) this.due = true
      else this.pending = this.refresh()
    }, ms)
  }

  private async refresh(): Promise<void> {
    if (this.stopped) return
    const asked = performance.now()
    let next = this.opts.everyMs
    try {
      const { rows } = await this.pool.query<{ claimedAt: Date }>(
        `UPDATE emails SET claimed_at = now() WHERE id = $1 AND status = 'sending' AND claimed_at = $2::timestamptz
         RETURNING claimed_at AS "claimedAt"`,
        [this.email.id, this.email.claimedAt],
      )
      if (!rows[0]) {
        this.lost = true
        this.opts.onLost()
        return
      }
      this.email.claimedAt = rows[0].claimedAt
      this.confirmedAt = asked
    } catch (err) {
      this.opts.onError(err)
      next = Math.min(next, RETRY_AFTER_ERROR_MS)
    }
    if (!this.stopped) this.schedule(next)
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    await this.pending
  }
}
