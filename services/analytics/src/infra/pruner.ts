import { every, type Logger, type Loop } from '@mailer/observability'
import type { AggregateStore } from './aggregate-store.js'

/**
 * Deletes idempotency keys past their retention now and then (every replica may run it; the
 * deletes are idempotent). The first run is one interval after start.
 */
export function startPruner(
  store: AggregateStore,
  logger: Logger,
  opts: { retentionDays: number; everyMs: number },
): Loop {
  return every(opts.everyMs, 'analytics-prune', logger, async () => {
    const n = await store.pruneProcessed(opts.retentionDays)
    if (n > 0) logger.info({ deleted: n }, 'pruned old analytics idempotency keys')
  })
}
