import type { MailerApiError } from './errors.js'

/** The longest `Retry-After` the client waits for; anything longer fails at once. */
export const MAX_RETRY_AFTER_SECONDS = 60

/** delta-seconds, or several of them where a proxy joined repeated headers (`5, 5`). */
const DELTA_SECONDS = /^\d+(?:\.\d+)?(?:\s*,\s*\d+(?:\.\d+)?)*$/
/** The three date forms RFC 9110 §5.6.7 has recipients read: IMF-fixdate, RFC 850, asctime. */
const HTTP_DATE = [
  /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/,
  /^[A-Z][a-z]{5,8}, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT$/,
  /^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/,
]

/**
 * Seconds from a `Retry-After` header: delta-seconds (a fraction rounded up; of joined repeats,
 * the longest) or an HTTP date. Undefined when absent or unreadable, which waits as if it were
 * missing: `Date.parse` alone read `61.5` as a day in 1961, already past, so the client retried
 * at once where it had to give up.
 */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value == null) return undefined
  const v = value.trim()
  if (DELTA_SECONDS.test(v)) return Math.max(...v.split(',').map((s) => Math.ceil(Number(s))))
  if (!HTTP_DATE.some((re) => re.test(v))) return undefined
  const at = Date.parse(v)
  if (Number.isNaN(at)) return undefined
  return Math.max(0, Math.ceil((at - now) / 1000))
}

export interface RetryContext {
  /** Retries already made for this call (0 before the first retry). */
  retriesDone: number
  maxRetries: number
  /**
   * The request is safe to repeat: a GET, or a write carrying an idempotency key. A 503 on a
   * write without one may have been applied (the service answered too late), so it is not retried.
   */
  idempotent: boolean
}

/**
 * How long to wait before retrying after `err`, or null to give up (interface.md part 8):
 * - 429 `rate_limited`: wait `Retry-After` (60 s when missing), unless it is over 60 s;
 * - 503 `service_unavailable` (a backing service did not answer): the same, for idempotent calls;
 * - never `daily_limit_exceeded` (nothing helps before 00:00 UTC) nor any other error.
 */
export function retryDelayMs(err: MailerApiError, ctx: RetryContext): number | null {
  if (ctx.retriesDone >= ctx.maxRetries) return null
  let seconds: number
  if (err.code === 'rate_limited') seconds = err.retryAfter ?? 60
  else if (err.code === 'service_unavailable' && ctx.idempotent) seconds = err.retryAfter ?? 1
  else return null
  if (seconds > MAX_RETRY_AFTER_SECONDS) return null
  return seconds * 1000
}
