/** Node's longest timer (about 24.8 days); a longer one fires at once. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1

/**
 * A time-out as asked, checked when the client is made: 0 or NaN timed every call out (or, with
 * nats.js 2.x, silently became its 1 s default), Infinity or more than MAX_TIMEOUT_MS fired at
 * once, and a negative one failed each call with a RangeError (fetch) or INVALID_OPTION (NATS).
 */
export function timeoutOf(ms: unknown, fallback: number): number {
  if (ms === undefined) return fallback
  if (typeof ms !== 'number' || !(ms >= 1 && ms <= MAX_TIMEOUT_MS))
    throw new TypeError(
      `timeoutMs must be a number of milliseconds from 1 to ${MAX_TIMEOUT_MS}, not ${String(ms)}`,
    )
  return ms
}

/**
 * How many retries a call may make: a whole number from 0. NaN (`Number(process.env.X)` with X
 * unset) compared false with every count, so such a client retried without end.
 */
export function maxRetriesOf(n: unknown, fallback: number): number {
  if (n === undefined) return fallback
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0)
    throw new TypeError(`maxRetries must be a whole number from 0 (0 turns retries off), not ${String(n)}`)
  return n
}
