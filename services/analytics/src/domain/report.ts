import {
  ANALYTICS_COUNTERS,
  type AnalyticsCounts,
  type AnalyticsInterval,
  type AnalyticsRange,
  type AnalyticsResponse,
  type AnalyticsTopEntry,
} from '@mailer/contracts'
import { addCounts, zeroCounts } from './aggregate.js'
import { quantile } from './histogram.js'
import { rate } from './rates.js'
import type { Window } from './time-buckets.js'

/** A stored bucket row (already summed over projects for the all-projects view). */
export interface BucketRow extends AnalyticsCounts {
  start: Date
}

export interface ReportInput {
  range: AnalyticsRange
  interval: AnalyticsInterval
  window: Window
  rows: BucketRow[]
  /** Delivery-time histogram summed over the rows of the range. */
  hist: readonly (number | null)[]
  topTags: AnalyticsTopEntry[]
  topBouncedDomains: AnalyticsTopEntry[]
}

/** The response body: contiguous zero-filled buckets, totals, rates and percentiles. */
export function buildReport(input: ReportInput): AnalyticsResponse {
  const byStart = new Map(input.rows.map((r) => [r.start.getTime(), r]))
  const totals = zeroCounts()
  const buckets = input.window.starts.map((start) => {
    const row = byStart.get(start.getTime())
    const counts = zeroCounts()
    if (row) for (const c of ANALYTICS_COUNTERS) counts[c] = row[c]
    addCounts(totals, counts)
    return { bucket: start.toISOString(), ...counts }
  })
  return {
    range: input.range,
    interval: input.interval,
    buckets,
    totals,
    deliveryRate: rate(totals.delivered, totals.sent),
    bounceRate: rate(totals.bounced, totals.sent),
    complaintRate: rate(totals.complained, totals.sent),
    p50DeliveryMs: quantile(input.hist, 0.5),
    p95DeliveryMs: quantile(input.hist, 0.95),
    topTags: input.topTags,
    topBouncedDomains: input.topBouncedDomains,
  }
}
