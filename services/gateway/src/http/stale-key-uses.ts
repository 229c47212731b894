import type { Logger, Metrics } from '@mailer/observability'

/** While an auth outage lasts, a warning at most this often (with the count since the last). */
const WARN_EVERY_MS = 60_000

/**
 * Requests authenticated on a key verified before, past its TTL, because no auth replica
 * answered (`VerifiedKeys.stale`): counted in `mailer_gateway_auth_stale_total`, and logged once
 * as an outage starts, then at most once a minute while it lasts. Never names the key.
 */
export class StaleKeyUses {
  private readonly total
  private inOutage = false
  private warnedAt = 0
  private sinceWarning = 0

  constructor(
    private readonly logger: Logger,
    metrics: Metrics,
  ) {
    this.total = metrics.counter(
      'auth_stale_total',
      'Requests served on a key verified before, past its TTL, because the auth service could not be reached',
    )
  }

  used(now = Date.now()): void {
    this.total.inc()
    this.sinceWarning++
    if (this.inOutage && now - this.warnedAt < WARN_EVERY_MS) return
    this.inOutage = true
    this.warnedAt = now
    this.logger.warn(
      { requests: this.sinceWarning },
      'auth service unreachable: serving keys verified before it went away (AUTH_STALE_GRACE_SECONDS)',
    )
    this.sinceWarning = 0
  }

  /** Auth answered a verification: the next stale use is a new outage, warned at once. */
  answered(): void {
    this.inOutage = false
  }
}
