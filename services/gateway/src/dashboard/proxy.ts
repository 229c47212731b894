import type { RouteDef } from '@mailer/contracts'
import { type Request, type Response, Router } from 'express'
import { AllowedMethods, type Served } from '../http/allowed-methods.js'
import type { Authenticator } from '../http/authenticate.js'
import { sendError } from '../http/errors.js'
import {
  type ForwardDeps,
  forwardRoute,
  methodNotAllowed,
  mirrorPath,
  notFound,
} from '../routes/api-routes.js'
import type { DashboardAuth } from './auth.js'

export const API_PREFIX = '/dashboard/api'

/**
 * The admin API for the dashboard: every admin route and every admin-mirror route of the catalog,
 * at the same path under /dashboard/api (`/dashboard/api/v1/admin/projects`), forwarded exactly as
 * the gateway forwards it for the admin key, but authenticated by the dashboard session (and, for
 * writes, its CSRF checks) instead of a Bearer key. Project-key routes are not exposed.
 */
export function proxyRouter(
  routes: RouteDef[],
  deps: ForwardDeps & { auth: Authenticator; dashboard: DashboardAuth },
): Router {
  const router = Router()
  const served: Served[] = []
  for (const def of routes) {
    const method = def.method.toLowerCase() as 'get' | 'post' | 'patch' | 'put' | 'delete'
    if (def.auth === 'admin') {
      const path = API_PREFIX + def.path
      router[method](
        path,
        forwardRoute(def, (req) => deps.dashboard.caller(req), deps),
      )
      served.push({ path, method: def.method })
    } else if (def.mirror) {
      const path = API_PREFIX + mirrorPath(def.path)
      const authenticate = async (req: Request) =>
        deps.auth.onProject(await deps.dashboard.caller(req), String(req.params.slug))
      router[method](path, forwardRoute(def, authenticate, deps))
      served.push({ path, method: def.method })
    }
  }

  // Anything else under the API prefix answers in the contract's shape, never with the page.
  const session = `${API_PREFIX}/session`
  const allowed = new AllowedMethods([
    ...['GET', 'POST', 'DELETE'].map((method) => ({ path: session, method })),
    ...served,
  ])
  router.use(API_PREFIX, (req: Request, res: Response) => {
    const path = API_PREFIX + req.path
    const allow = allowed.allow(path)
    if (allow) res.setHeader('Allow', allow)
    const err = allow ? methodNotAllowed(req.method) : notFound()
    sendError(res, err, deps.logger, req.requestId)
  })
  return router
}
