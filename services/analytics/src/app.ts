import { type Runtime, startRuntime } from '@mailer/bus'
import type { AnalyticsEnv } from './env.js'
import { startIngest } from './handlers/ingest.js'
import { serveAnalyticsRoutes } from './handlers/routes.js'
import { AggregateStore } from './infra/aggregate-store.js'
import { startPruner } from './infra/pruner.js'

export const SERVICE = 'analytics'

/**
 * Starts the analytics service: consumes the EVENTS stream into hourly/daily aggregates and
 * answers the analytics routes from them.
 */
export async function start(env: AnalyticsEnv): Promise<Runtime<AnalyticsEnv>> {
  const rt = await startRuntime(SERVICE, env)
  const store = new AggregateStore(rt.db, env.ANALYTICS_MAX_DIMENSION_VALUES)

  serveAnalyticsRoutes(rt.bus, store, SERVICE)
  const ingest = await startIngest(rt, store)
  rt.onStop(() => ingest.stop())
  const pruner = startPruner(store, rt.logger, {
    retentionDays: env.ANALYTICS_DEDUPE_RETENTION_DAYS,
    everyMs: env.ANALYTICS_PRUNE_INTERVAL_SECONDS * 1000,
  })
  rt.onStop(() => pruner.stop())
  // Subscriptions must reach the server before we report ready.
  await rt.bus.flush()
  rt.started()
  return rt
}
