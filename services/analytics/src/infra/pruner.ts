import type { Logger } from '@mailer/observability'
import type { AggregateStore } from './aggregate-store.js'

/**
 * Deletes idempotency keys past their retention now and then (every replica may run it; the
 * deletes are idempotent). The first run is one interval after start.
 */
export function startPruner(
  store: AggregateStore,
  logger: Logger,
  opts: { retentionDays: number; everyMs: number },
): { stop(): Promise<void> } {
  let running: Promise<void> | undefined
  const timer = setInterval(() => {
    if (running) return
    running = store
      .pruneProcessed(opts.retentionDays)
      .then((n) => {
        if (n > 0) logger.info({ deleted: n }, 'pruned old analytics idempotency keys')
      })
      .catch((err) => logger.warn({ err }, 'pruning analytics idempotency keys failed'))
      .finally(() => {
        running = undefined
      })
  }, opts.everyMs)
  timer.unref()
  return {
    async stop() {
      clearInterval(timer)
      await running
    },
  }
}
