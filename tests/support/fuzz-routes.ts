import { ROUTES, type RouteDef } from '@mailer/contracts'
import { mirrorPath } from '@mailer/gateway/api-routes'
import { API_PREFIX } from '@mailer/gateway/dashboard-proxy'
import { PUBLIC_LINKS } from '@mailer/gateway/public-links'

/**
 * How a served route is reached: a project key, the admin key (admin routes and the admin
 * mirror), the dashboard session (its copies of those, and the session routes themselves), or
 * nothing (public links, /health). /openapi.json takes either key.
 */
export type Access = 'project' | 'admin' | 'mirror' | 'dashboard' | 'session' | 'public' | 'open'

export interface Served {
  method: string
  path: string
  access: Access
  /** The catalog entry behind it (body and query schemas), for the catalog's routes and copies. */
  def?: RouteDef
}

/**
 * Everything the gateway serves on its port, derived from what the gateway itself registers (the
 * catalog, the mirror rule, the dashboard's copies, the public links), so that a new route is
 * fuzzed without anyone adding it here. Only /health and /openapi.json are named: app.ts does too.
 */
export function servedRoutes(): Served[] {
  const out: Served[] = []
  for (const def of ROUTES) {
    if (def.auth === 'admin') {
      out.push({ method: def.method, path: def.path, access: 'admin', def })
      out.push({ method: def.method, path: API_PREFIX + def.path, access: 'dashboard', def })
    } else {
      out.push({ method: def.method, path: def.path, access: 'project', def })
      if (def.mirror) {
        out.push({ method: def.method, path: mirrorPath(def.path), access: 'mirror', def })
        out.push({ method: def.method, path: API_PREFIX + mirrorPath(def.path), access: 'dashboard', def })
      }
    }
  }
  for (const method of ['GET', 'POST', 'DELETE'])
    out.push({ method, path: `${API_PREFIX}/session`, access: 'session' })
  for (const l of PUBLIC_LINKS) out.push({ method: l.method, path: l.path, access: 'public' })
  out.push(
    { method: 'GET', path: '/health', access: 'open' },
    // Any working key reads it (app.ts); fuzzed with the project key, as every caller has one.
    { method: 'GET', path: '/openapi.json', access: 'project' },
  )
  return out
}

/** The methods each path is served with (for a request with another one, which must be a 405). */
export function methodsByPath(routes: Served[]): Map<string, Set<string>> {
  const m = new Map<string, Set<string>>()
  for (const r of routes) m.set(r.path, (m.get(r.path) ?? new Set()).add(r.method))
  return m
}
