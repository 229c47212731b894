import type { SendAllowance } from '@mailer/contracts'
import { admit, type CounterState } from './limits.js'

/**
 * Fairness between transactional and broadcast email: broadcast emails are admitted only while
 * the project's rolling count stays under `share` of the rate limit, so whatever a broadcast
 * does, the rest of the allowance is left for password resets and the like.
 */
export function broadcastRateLimit(rateLimit: number, share: number): number {
  return Math.max(1, Math.floor(rateLimit * share))
}

/**
 * What a project may send now (`email.allowance`), from the same counters and the same rolling
 * estimate as acceptance. When broadcasts have no room but the day and the rate limit have (the
 * share kept for transactional email is what is used), the hint to ask again is a tenth of the
 * rate period: the estimate frees room gradually as the previous window ages. A limit reached
 * pauses the broadcast instead (interface.md part 3), so there is no hint then.
 */
export function allowance(
  state: CounterState,
  elapsed: number,
  limits: { rateLimit: number; broadcastRateLimit: number; dailyLimit: number; periodSeconds: number },
): SendAllowance {
  const all = admit(Number.MAX_SAFE_INTEGER, state, elapsed, limits.rateLimit, 0).admitted
  const broadcast = admit(
    Number.MAX_SAFE_INTEGER,
    state,
    elapsed,
    limits.broadcastRateLimit,
    limits.dailyLimit,
  ).admitted
  const dayLeft = limits.dailyLimit > 0 ? Math.max(0, limits.dailyLimit - state.day) : null
  return {
    rateLeft: all,
    dayLeft,
    broadcastLeft: broadcast,
    retryAfterMs:
      broadcast === 0 && dayLeft !== 0 && all > 0 ? Math.ceil((limits.periodSeconds * 1000) / 10) : 0,
  }
}
