import { z } from 'zod'
import { SLUG_RE } from './projects.js'

/** `range`: the last N UTC calendar days, today included (contract.md part 5, docs/api.md "Analytics"). */
export const ANALYTICS_RANGES = ['7d', '30d', '90d'] as const
export type AnalyticsRange = (typeof ANALYTICS_RANGES)[number]
export const ANALYTICS_INTERVALS = ['day', 'hour'] as const
export type AnalyticsInterval = (typeof ANALYTICS_INTERVALS)[number]

/** The counters every bucket and the totals carry, in response order. */
export const ANALYTICS_COUNTERS = [
  'sent',
  'delivered',
  'deferred',
  'bounced',
  'complained',
  'rejected',
  'failed',
  'opened',
  'clicked',
] as const
export type AnalyticsCounter = (typeof ANALYTICS_COUNTERS)[number]

const rangeQuery = {
  range: z
    .enum(ANALYTICS_RANGES, { message: `range must be one of ${ANALYTICS_RANGES.join(', ')}` })
    .default('30d'),
  interval: z
    .enum(ANALYTICS_INTERVALS, { message: `interval must be one of ${ANALYTICS_INTERVALS.join(', ')}` })
    .default('day'),
}

/** `GET /v1/analytics` (and its admin mirror). */
// Any range by any interval (contract.md part 5 lists them apart): 90 days by the hour is 2,160
// buckets, read from the hour rows, which are kept as long as the day rows.
export const AnalyticsQuery = z.object(rangeQuery)
export type AnalyticsQuery = z.infer<typeof AnalyticsQuery>

/** `GET /v1/admin/analytics`: the same, plus an optional project slug (all projects when omitted). */
export const AdminAnalyticsQuery = z.object({
  ...rangeQuery,
  project: z.string().regex(SLUG_RE, 'project must be a project slug').optional(),
})
export type AdminAnalyticsQuery = z.infer<typeof AdminAnalyticsQuery>

const count = z.number().int().min(0)
export const AnalyticsCounts = z.object({
  sent: count,
  delivered: count,
  deferred: count,
  bounced: count,
  complained: count,
  rejected: count,
  failed: count,
  opened: count,
  clicked: count,
})
export type AnalyticsCounts = z.infer<typeof AnalyticsCounts>

/** One bucket: its start (ISO 8601 UTC) and the counts of events that happened in it. */
export const AnalyticsBucket = AnalyticsCounts.extend({ bucket: z.string() })
export type AnalyticsBucket = z.infer<typeof AnalyticsBucket>

export const AnalyticsTopEntry = z.object({ value: z.string(), count: count })
export type AnalyticsTopEntry = z.infer<typeof AnalyticsTopEntry>

const rate = z.number().min(0).nullable()
export const AnalyticsResponse = z.object({
  range: z.enum(ANALYTICS_RANGES),
  interval: z.enum(ANALYTICS_INTERVALS),
  /** Contiguous, oldest first, zero-filled, from the first bucket of the range to the current one. */
  buckets: z.array(AnalyticsBucket),
  totals: AnalyticsCounts,
  /** n / sent, 4 decimals; null when nothing was sent in the range. */
  deliveryRate: rate,
  bounceRate: rate,
  complaintRate: rate,
  /** From the delivery-time histogram; null when nothing was delivered in the range. */
  p50DeliveryMs: z.number().int().nullable(),
  p95DeliveryMs: z.number().int().nullable(),
  /** Top 10 `key:value` tags of sent emails, most used first. */
  topTags: z.array(AnalyticsTopEntry),
  /** Top 10 recipient domains of bounces, most bounced first. */
  topBouncedDomains: z.array(AnalyticsTopEntry),
})
export type AnalyticsResponse = z.infer<typeof AnalyticsResponse>
