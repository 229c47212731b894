import { ROUTES, type RouteDef, RouteRequest } from '@mailer/contracts'
import type { Bus } from './bus.js'
import { safeRouteInput } from './route-input.js'
import { serveAdminRpc } from './rpc-entry.js'

export type RouteHandler = (req: RouteRequest) => Promise<unknown>

const routeBySubject = new Map<string, RouteDef>(ROUTES.map((r) => [r.subject, r]))
// Per connection, so that several services started in one process (the system tests) stay apart.
const registry = new WeakMap<Bus, Map<string, RouteHandler>>()

export interface ServeRoutesOptions {
  /** Also serve admin and mirrored routes as AdminRpc operations (default true). */
  adminRpc?: boolean
}

/**
 * Serves gateway routes: each subject of the route catalog gets a handler that receives the
 * parsed `RouteRequest` (caller, params, query, body, headers) and returns the response body.
 * Admin routes and mirrored project routes are also served as AdminRpc (`rpc.admin.<operation>`)
 * by the same handler.
 */
export function serveRoutes(
  bus: Bus,
  queue: string,
  handlers: Record<string, RouteHandler>,
  opts: ServeRoutesOptions = {},
): void {
  let mine = registry.get(bus)
  if (!mine) {
    mine = new Map()
    registry.set(bus, mine)
  }
  for (const [subject, given] of Object.entries(handlers)) {
    const route = routeBySubject.get(subject)
    const audited = route !== undefined && isAdminChange(route)
    const handler: RouteHandler = async (req) => {
      const input = safeRouteInput(req)
      const out = await given(input)
      if (audited) auditLine(bus, subject, input)
      return out
    }
    bus.serve(subject, RouteRequest, handler, { queue })
    mine.set(subject, handler)
    if (route && opts.adminRpc !== false && (route.auth === 'admin' || route.mirror)) {
      serveAdminRpc(bus, queue, route, handler)
    }
  }
}

/**
 * The handler this process serves for a route subject, for other entry points (MailerRpc) that
 * must run exactly the route's code. Throws when the route is not served here (a wiring bug).
 */
export function routeHandler(bus: Bus, subject: string): RouteHandler {
  const handler = registry.get(bus)?.get(subject)
  if (!handler) throw new Error(`no handler for ${subject} is served on this connection`)
  return handler
}

/** A change made with admin rights: the admin routes' writes (projects, keys, domains, suppressions...). */
const isAdminChange = (route: RouteDef): boolean => route.auth === 'admin' && route.method !== 'GET'

/**
 * The audit trail of admin changes: one info line per change that succeeded, with who asked
 * (`via`: the admin key, the dashboard's session, AdminRpc) and what it named (the path's ids and
 * slugs). Never the body: a created key's secret is in the answer, and names or addresses in the
 * request are the operator's business, not the log's.
 */
function auditLine(bus: Bus, subject: string, req: RouteRequest): void {
  bus.logger.info(
    { requestId: req.caller.requestId, route: subject, via: req.caller.via, params: req.params },
    'admin change',
  )
}
