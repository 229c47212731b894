import type { Bus } from '@mailer/bus'
import type { RouteDef } from '@mailer/contracts'
import type { Db } from '@mailer/db'
import type { Logger, Metrics } from '@mailer/observability'
import { Router } from 'express'
import type { GatewayEnv } from '../env.js'
import { withoutAutoOptions } from '../http/allowed-methods.js'
import type { Authenticator } from '../http/authenticate.js'
import type { ReadBody } from '../http/read-body.js'
import { DashboardSignins, startSigninPrune } from '../infra/dashboard-signins.js'
import { DashboardSignouts, startSignoutSync } from '../infra/dashboard-signouts.js'
import { DashboardAuth } from './auth.js'
import { securityHeaders } from './headers.js'
import { API_PREFIX, proxyRouter } from './proxy.js'
import { sessionRouter } from './session-routes.js'
import { findDashboardDir, staticRouter } from './static.js'

export interface DashboardDeps {
  env: GatewayEnv
  routes: RouteDef[]
  bus: Bus
  db: Db
  auth: Authenticator
  logger: Logger
  metrics: Metrics
  /** Registers a step for shutdown (the sign-outs' reload and prune loops, the sign-ins' prune). */
  onStop(step: () => Promise<void>): void
  readBody: ReadBody
}

/**
 * Everything under /dashboard: the built web app, its session endpoints and its admin API.
 * Resolves after a first read of the sign-outs, so a restarted gateway never serves a session
 * signed out before (if that read fails, sessions are 503 until one succeeds).
 */
export async function dashboardRouter(deps: DashboardDeps): Promise<Router> {
  const { env } = deps
  const dashboard = new DashboardAuth({
    adminKey: env.ADMIN_API_KEY,
    sessionHours: env.DASHBOARD_SESSION_HOURS,
    cookieSecure: env.DASHBOARD_COOKIE_SECURE,
    allowedOrigins: env.DASHBOARD_ALLOWED_ORIGINS,
  })
  const dir = findDashboardDir(env.DASHBOARD_DIR)
  if (!dir)
    deps.logger.warn(
      'dashboard not built: /dashboard answers 503 until `pnpm --filter @mailer/dashboard build`',
    )

  const signouts = new DashboardSignouts(deps.db)
  const signins = new DashboardSignins(deps.db)
  const sessions = sessionRouter({
    auth: dashboard,
    bus: deps.bus,
    signins,
    signouts,
    logger: deps.logger,
    metrics: deps.metrics,
    maxBodyBytes: env.MAX_BODY_BYTES,
  })
  const sync = await startSignoutSync(signouts, dashboard.revoked, deps.bus, deps.logger)
  deps.onStop(() => sync.stop())
  const prune = startSigninPrune(signins, deps.logger)
  deps.onStop(() => prune.stop())

  const router = Router()
  router.use(
    '/dashboard',
    securityHeaders((req) => dashboard.secure(req)),
  )
  router.use(API_PREFIX, (_req, res, next) => {
    res.set('Cache-Control', 'no-store')
    next()
  })
  // OPTIONS on the session path goes on to the API's 405 (proxy.ts), as on every other API path.
  router.use(withoutAutoOptions(sessions))
  router.use(proxyRouter(deps.routes, { ...deps, timeoutMs: env.UPSTREAM_TIMEOUT_MS, dashboard }))
  router.use(staticRouter(dir))
  return router
}
