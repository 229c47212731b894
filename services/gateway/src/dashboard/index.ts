import type { Bus } from '@mailer/bus'
import type { RouteDef } from '@mailer/contracts'
import type { Logger, Metrics } from '@mailer/observability'
import { Router } from 'express'
import type { GatewayEnv } from '../env.js'
import { withoutAutoOptions } from '../http/allowed-methods.js'
import type { Authenticator } from '../http/authenticate.js'
import { DashboardAuth } from './auth.js'
import { securityHeaders } from './headers.js'
import { API_PREFIX, proxyRouter } from './proxy.js'
import { sessionRouter } from './session-routes.js'
import { findDashboardDir, staticRouter } from './static.js'

export interface DashboardDeps {
  env: GatewayEnv
  routes: RouteDef[]
  bus: Bus
  auth: Authenticator
  logger: Logger
  metrics: Metrics
}

/** Everything under /dashboard: the built web app, its session endpoints and its admin API. */
export function dashboardRouter(deps: DashboardDeps): Router {
  const { env } = deps
  const dashboard = new DashboardAuth({
    adminKey: env.ADMIN_API_KEY,
    sessionHours: env.DASHBOARD_SESSION_HOURS,
    allowedOrigins: env.DASHBOARD_ALLOWED_ORIGINS,
  })
  const dir = findDashboardDir(env.DASHBOARD_DIR)
  if (!dir)
    deps.logger.warn(
      'dashboard not built: /dashboard answers 503 until `pnpm --filter @mailer/dashboard build`',
    )

  const router = Router()
  router.use('/dashboard', securityHeaders)
  router.use(API_PREFIX, (_req, res, next) => {
    res.set('Cache-Control', 'no-store')
    next()
  })
  // OPTIONS on the session path goes on to the API's 405 (proxy.ts), as on every other API path.
  router.use(
    withoutAutoOptions(
      sessionRouter({ auth: dashboard, bus: deps.bus, logger: deps.logger, metrics: deps.metrics }),
    ),
  )
  router.use(proxyRouter(deps.routes, { ...deps, timeoutMs: env.UPSTREAM_TIMEOUT_MS, dashboard }))
  router.use(staticRouter(dir))
  return router
}
