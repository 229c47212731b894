import { every, type Logger, type Loop } from '@mailer/observability'
import { RANGE_DAYS } from '../domain/time-buckets.js'
import type { AggregateStore } from './aggregate-store.js'

/** Days of per-day dimensions any report can still read: the longest range. */
const DIMENSION_DAYS = Math.max(...Object.values(RANGE_DAYS))

/**
 * Deletes idempotency keys past their retention, and per-day dimensions older than the longest
 * range, now and then (every replica may run it; the deletes are idempotent). The first run is
 * one interval after start.
 */
export function startPruner(
  store: AggregateStore,
  logger: Logger,
  opts: { retentionDays: number; everyMs: number },
): Loop {
  return every(opts.everyMs, 'analytics-prune', logger, async () => {
    const n = await store.pruneProcessed(opts.retentionDays)
    if (n > 0) logger.info({ deleted: n }, 'pruned old analytics idempotency keys')
    const d = await store.pruneDimensions(DIMENSION_DAYS)
    if (d > 0) logger.info({ deleted: d }, 'pruned analytics dimensions no range reads any more')
  })
}
