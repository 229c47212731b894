import { ANALYTICS_COUNTERS, type AnalyticsCounter, type AnalyticsCounts } from '@mailer/contracts'
import type { DimensionKind, Effect } from './event-effects.js'
import { emptyHistogram, type Histogram, record } from './histogram.js'
import { bucketStart, type Granularity, utcDay } from './time-buckets.js'

export const GRANULARITIES: readonly Granularity[] = ['hour', 'day']

export const zeroCounts = (): AnalyticsCounts => ({
  sent: 0,
  delivered: 0,
  deferred: 0,
  bounced: 0,
  complained: 0,
  rejected: 0,
  failed: 0,
  opened: 0,
  clicked: 0,
})

/** Increments to add to one `analytics_buckets` row. */
export interface BucketDelta {
  projectId: string
  granularity: Granularity
  start: Date
  counts: Record<AnalyticsCounter, number>
  /** `null` when the batch delivered nothing in this bucket (the stored histogram is left alone). */
  hist: Histogram | null
}

/** Increment to add to one `analytics_dimensions` row. */
export interface DimensionDelta {
  projectId: string
  day: string
  kind: DimensionKind
  value: string
  count: number
}

/** Keeps the first effect of each key (a batch can carry the same event twice). */
export function uniqueByKey(effects: Effect[]): Effect[] {
  const seen = new Set<string>()
  return effects.filter((e) => {
    if (seen.has(e.key)) return false
    seen.add(e.key)
    return true
  })
}

/**
 * Folds effects into one delta per bucket row (hour and day) and per dimension row, sorted by
 * primary key so that concurrent writers lock rows in the same order and cannot deadlock.
 */
export function aggregate(effects: Effect[]): { buckets: BucketDelta[]; dimensions: DimensionDelta[] } {
  const buckets = new Map<string, BucketDelta>()
  const dims = new Map<string, DimensionDelta>()
  for (const e of effects) {
    for (const granularity of GRANULARITIES) {
      const start = bucketStart(e.at, granularity)
      const id = `${e.projectId}\u0000${granularity}\u0000${start.toISOString()}`
      let b = buckets.get(id)
      if (!b) {
        b = { projectId: e.projectId, granularity, start, counts: zeroCounts(), hist: null }
        buckets.set(id, b)
      }
      b.counts[e.counter] += e.amount
      if (e.deliveryMs !== null) {
        b.hist ??= emptyHistogram()
        record(b.hist, e.deliveryMs)
      }
    }
    const day = utcDay(e.at)
    for (const d of e.dimensions) {
      const id = `${e.projectId}\u0000${day}\u0000${d.kind}\u0000${d.value}`
      const row = dims.get(id)
      // Per unit counted: a tag of an email sent to three recipients counts three sends.
      if (row) row.count += e.amount
      else dims.set(id, { projectId: e.projectId, day, kind: d.kind, value: d.value, count: e.amount })
    }
  }
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
  return {
    buckets: [...buckets.entries()].sort(([a], [b]) => cmp(a, b)).map(([, v]) => v),
    dimensions: [...dims.entries()].sort(([a], [b]) => cmp(a, b)).map(([, v]) => v),
  }
}

/** Sums counts (totals of a range). */
export function addCounts(
  into: AnalyticsCounts,
  add: Partial<Record<AnalyticsCounter, number>>,
): AnalyticsCounts {
  for (const c of ANALYTICS_COUNTERS) into[c] += add[c] ?? 0
  return into
}
