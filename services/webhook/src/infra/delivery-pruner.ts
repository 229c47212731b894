import { every, type Logger, type Loop, type Metrics } from '@mailer/observability'
import type { DeliveryStore } from './delivery-store.js'

export interface PrunerOptions {
  /** Finished deliveries older than this many days are deleted. */
  retentionDays: number
  everyMs: number
  /** Deliveries deleted per statement (one webhook at a time). */
  chunk?: number
}

/**
 * Deletes finished webhook deliveries past their retention, and the event payloads only they
 * needed, now and then: without it `webhook_deliveries`, a row per event and webhook, is the
 * fastest-growing table. Every replica may run it (the deletes skip locked rows and are
 * idempotent); the first run is one interval after start.
 */
export function startDeliveryPruner(
  store: DeliveryStore,
  logger: Logger,
  metrics: Metrics,
  opts: PrunerOptions,
): Loop {
  const chunk = opts.chunk ?? 1_000
  const pruned = metrics.counter(
    'deliveries_pruned_total',
    'Finished webhook deliveries deleted after their retention',
  )
  let stopping = false
  const loop = every(opts.everyMs, 'webhook-delivery-prune', logger, async () => {
    let total = 0
    for (const w of await store.webhooks()) {
      for (let n = chunk; n === chunk && !stopping; ) {
        n = await store.pruneFinished(w.id, w.projectId, opts.retentionDays, chunk)
        total += n
        pruned.inc(n)
      }
    }
    if (total > 0)
      logger.info({ deleted: total, retentionDays: opts.retentionDays }, 'pruned old webhook deliveries')
  })
  return {
    async stop() {
      // A pass over many webhooks ends after the statement in flight.
      stopping = true
      await loop.stop()
    },
  }
}
