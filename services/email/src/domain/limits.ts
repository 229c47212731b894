import type { ErrorCode } from '@mailer/contracts'

/** The send_counters rows one acceptance touches, and how long each is worth keeping. */
export interface CounterWindows {
  /** The previous rate window (read only: it weighs into the rolling estimate). */
  previous: { key: string; expiresAt: Date }
  current: { key: string; expiresAt: Date }
  day: { key: string; expiresAt: Date }
  /** How far into the current rate window `now` is, 0 ≤ f < 1. */
  elapsed: number
}

export function counterWindows(now: Date, periodSeconds: number): CounterWindows {
  const periodMs = periodSeconds * 1000
  const index = Math.floor(now.getTime() / periodMs)
  const dayStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())
  const rateKey = (i: number) => `rate:${periodSeconds}:${i}`
  return {
    previous: { key: rateKey(index - 1), expiresAt: new Date((index + 1) * periodMs) },
    current: { key: rateKey(index), expiresAt: new Date((index + 2) * periodMs) },
    day: {
      key: `day:${new Date(dayStart).toISOString().slice(0, 10)}`,
      expiresAt: new Date(dayStart + 2 * 86_400_000),
    },
    elapsed: (now.getTime() - index * periodMs) / periodMs,
  }
}

export interface CounterState {
  /** Emails counted in the previous rate window. */
  previous: number
  /** Counted in the current rate window and today, before this request. */
  current: number
  day: number
}

export interface Admission {
  /** The first `admitted` items (in input order) are accepted; the rest carry `errorFor(j)`. */
  admitted: number
  errorFor(j: number): Extract<ErrorCode, 'rate_limited' | 'daily_limit_exceeded'>
}

/**
 * Admits up to `wanted` emails. The rate limit is a rolling window, estimated from the current
 * fixed window plus the previous one weighted by how much of it still overlaps (rounded up, so
 * the estimate never undercounts); the daily limit (0 = none) counts per UTC day. The rate limit
 * is checked first, as in the contract's check order.
 */
export function admit(
  wanted: number,
  state: CounterState,
  elapsed: number,
  rateLimit: number,
  dailyLimit: number,
): Admission {
  const rolling = Math.ceil(state.previous * (1 - elapsed)) + state.current
  const rateLeft = Math.max(0, rateLimit - rolling)
  const dayLeft = dailyLimit > 0 ? Math.max(0, dailyLimit - state.day) : Number.POSITIVE_INFINITY
  return {
    admitted: Math.min(wanted, rateLeft, dayLeft),
    errorFor: (j) => (j >= rateLeft ? 'rate_limited' : 'daily_limit_exceeded'),
  }
}
