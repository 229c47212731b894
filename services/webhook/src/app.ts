import { closeWithin, type Runtime, startRuntime } from '@mailer/bus'
import { createPgPool } from '@mailer/db'
import type { WebhookTarget } from './domain/matching.js'
import type { WebhookEnv } from './env.js'
import { serveDeliveries } from './handlers/deliveries.js'
import { serveEvents } from './handlers/events.js'
import { startFanout } from './handlers/fanout.js'
import { followWebhookChanges, makeInvalidate } from './handlers/invalidate.js'
import { serveWebhooks } from './handlers/webhooks.js'
import { DeliveryCleanup } from './infra/delivery-cleanup.js'
import { startDeliveryPruner } from './infra/delivery-pruner.js'
import { DeliveryStore } from './infra/delivery-store.js'
import { DeliveryWorker } from './infra/delivery-worker.js'
import { HttpSender } from './infra/http-sender.js'
import { WebhookCache } from './infra/webhook-cache.js'

export const SERVICE = 'webhook'

/**
 * Starts the webhook service: webhook routes, the event log, the EVENTS fan-out, the delivery
 * worker and the pruner of old deliveries.
 */
export async function start(env: WebhookEnv): Promise<Runtime<WebhookEnv>> {
  const rt = await startRuntime(SERVICE, env)
  const { bus, db } = rt

  const cache = new WebhookCache(
    (projectId): Promise<WebhookTarget[]> =>
      db.webhook.findMany({
        where: { projectId, enabled: true },
        select: { id: true, events: true, enabled: true, createdAt: true },
      }),
    env.WEBHOOK_CACHE_TTL_SECONDS * 1000,
  )
  // Fan-out, claim and finish go through plain pg (see DeliveryStore); closed after the worker stops.
  // No bitmap scans: the claim must read the due deliveries in index order and stop after the
  // oldest few hundred. A table that grew faster than its statistics (any burst) made the planner
  // pick a bitmap scan of every due row instead, sorted afterwards: 7-12 ms per claim with a backlog
  // of 20,000, against 1.4 ms (bench/README.md). Every other statement of this pool is a lookup by
  // key, for which bitmap scans never win.
  const pool = createPgPool(env.DATABASE_URL, {
    max: 8,
    queryTimeoutMs: env.DATABASE_QUERY_TIMEOUT_MS,
    settings: { enable_bitmapscan: 'off' },
  })
  rt.onStop(() => closeWithin('webhook pg pool', () => pool.end(), rt.logger, rt.dbWaits))
  const store = new DeliveryStore(db, pool)
  const sender = new HttpSender({
    timeoutMs: env.WEBHOOK_TIMEOUT_MS,
    allowPrivate: env.WEBHOOK_ALLOW_PRIVATE,
  })
  const worker = new DeliveryWorker(
    store,
    sender,
    {
      schedule: env.WEBHOOK_RETRY_SCHEDULE_SECONDS,
      timeoutMs: env.WEBHOOK_TIMEOUT_MS,
      pollMs: env.WEBHOOK_POLL_MS,
      concurrency: env.WEBHOOK_CONCURRENCY,
      perWebhook: env.WEBHOOK_ENDPOINT_CONCURRENCY,
      prefetch: env.WEBHOOK_PREFETCH,
      alive: () => !bus.nc.isClosed(),
      dbWaits: rt.dbWaits,
      link: { up: () => bus.isConnected, drops: () => bus.linkDrops },
    },
    rt.logger,
    rt.metrics,
  )
  // Read when scraped, never waited on for long: a hung database shows the last count.
  rt.metrics.sampledGauge('pending_deliveries', 'Webhook deliveries waiting for an attempt or a retry', () =>
    store.pendingCount(),
  )

  const cleanup = new DeliveryCleanup(db, rt.logger, {
    waitMs: env.WEBHOOK_CLEANUP_WAIT_MS,
    sweepEveryMs: env.WEBHOOK_PRUNE_INTERVAL_SECONDS * 1000,
  })

  const handBack = (projectId?: string) => worker.handBack(projectId)
  followWebhookChanges(bus, cache, handBack)
  const deps = {
    bus,
    db,
    store,
    cleanup,
    worker,
    invalidate: makeInvalidate(bus, cache, handBack),
    allowPrivate: env.WEBHOOK_ALLOW_PRIVATE,
    queue: SERVICE,
  }
  serveWebhooks(deps)
  serveDeliveries(deps)
  serveEvents(bus, db, SERVICE, env.LIST_SCAN_ROWS)

  worker.start()
  rt.onStop(() => sender.close())
  const pruner = startDeliveryPruner(store, rt.logger, rt.metrics, {
    retentionDays: env.WEBHOOK_DELIVERY_RETENTION_DAYS,
    everyMs: env.WEBHOOK_PRUNE_INTERVAL_SECONDS * 1000,
  })
  cleanup.start()
  const fanout = await startFanout(rt, cache, store, worker)
  // Stopped together, sharing the shutdown's database waits with the pools' closes (rt.dbWaits:
  // the worker's attempts first get their endpoints' answers): one after the other, against a hung
  // database, they waited out their queries past the pod's shutdown deadline. Fan-out messages
  // left in hand come back after the ack wait; a prune or a cleanup left running ends with the
  // process (the sweep of the next start ends the cleanup's work).
  rt.onStop(async () => {
    const pruned = pruner.stop()
    const cleaned = cleanup.stop()
    await Promise.all([
      fanout.stop({ waits: rt.dbWaits }),
      rt.dbWaits
        .within(pruned)
        .then((ended) => ended || rt.logger.warn('webhook delivery prune left running')),
      rt.dbWaits
        .within(cleaned)
        .then((ended) => ended || rt.logger.warn('disabled or deleted webhook cleanup left running')),
      worker.stop(),
    ])
  })
  // Subscriptions must reach the server before we report ready.
  await bus.flush()
  rt.started()
  return rt
}
