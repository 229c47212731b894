import type { AnalyticsInterval, AnalyticsRange } from '@mailer/contracts'

/** Stored granularities of `analytics_buckets` (the query's `interval` names them too). */
export type Granularity = AnalyticsInterval

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS

export const RANGE_DAYS: Record<AnalyticsRange, number> = { '7d': 7, '30d': 30, '90d': 90 }

/** Start of the UTC hour or day holding `at`. */
export function bucketStart(at: Date, granularity: Granularity): Date {
  const ms = at.getTime()
  const size = granularity === 'hour' ? HOUR_MS : DAY_MS
  return new Date(Math.floor(ms / size) * size)
}

/** `YYYY-MM-DD` of the UTC day holding `at` (the key of `analytics_dimensions.day`). */
export const utcDay = (at: Date): string => bucketStart(at, 'day').toISOString().slice(0, 10)

export interface Window {
  /** First bucket start (00:00 UTC of the first day of the range). */
  from: Date
  /** Start of the bucket holding `now` (the last bucket). */
  to: Date
  /** First UTC day of the range, `YYYY-MM-DD` (for the per-day dimensions). */
  fromDay: string
  /** Last UTC day of the range (today): dimensions of later days, from a clock ahead, wait for it. */
  toDay: string
  /** Every bucket start from `from` to `to`, oldest first. */
  starts: Date[]
}

/**
 * The buckets of a range: the last N UTC calendar days, today included, cut into days or hours
 * up to the bucket holding `now` (no future buckets). Totals are therefore the same whichever
 * interval is asked for.
 */
export function windowOf(range: AnalyticsRange, interval: AnalyticsInterval, now: Date): Window {
  const today = bucketStart(now, 'day')
  const from = new Date(today.getTime() - (RANGE_DAYS[range] - 1) * DAY_MS)
  const to = bucketStart(now, interval)
  const step = interval === 'hour' ? HOUR_MS : DAY_MS
  const starts: Date[] = []
  for (let t = from.getTime(); t <= to.getTime(); t += step) starts.push(new Date(t))
  return { from, to, fromDay: utcDay(from), toDay: utcDay(now), starts }
}
