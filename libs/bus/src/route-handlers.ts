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
    const handler: RouteHandler = async (req) => given(safeRouteInput(req))
    bus.serve(subject, RouteRequest, handler, { queue })
    mine.set(subject, handler)
    const route = routeBySubject.get(subject)
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
