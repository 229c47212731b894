import type { Bus } from '@mailer/bus'
import { type Caller, MailerError, type RouteDef, type RouteRequest } from '@mailer/contracts'
import type { Logger } from '@mailer/observability'
import type { Request, Response, Router } from 'express'
import type { Served } from '../http/allowed-methods.js'
import type { Authenticator } from '../http/authenticate.js'
import { jsonBody } from '../http/body.js'
import { sendError } from '../http/errors.js'
import { headerText } from '../http/header-text.js'
import { closeIfBodyUnread, type ReadBody } from '../http/read-body.js'

export const MIRROR_PREFIX = '/v1/admin/projects/:slug'

/** `/v1/emails/:id` → `/v1/admin/projects/:slug/emails/:id` (interface.md "Admin mirror"). */
export const mirrorPath = (path: string): string => `${MIRROR_PREFIX}${path.slice('/v1'.length)}`

function successStatus(def: RouteDef, result: unknown): number {
  if (typeof def.status === 'function') return def.status(result)
  return def.status ?? 200
}

export interface ForwardDeps {
  bus: Bus
  logger: Logger
  timeoutMs: number
  /** Called once the caller is authenticated: no body is read for a refused one. */
  readBody: ReadBody
}

/**
 * A forwarded header sent on more than one line. Node joins the lines with ", ", so two
 * `Idempotency-Key: a` lines made the key `a, a`, and a retry sending it once was another key:
 * a second email. The error names the field the header stands for (`idempotencyKey`).
 */
function givenTwice(header: string): MailerError {
  const param = header.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())
  const name = header.replace(/(^|-)([a-z])/g, (m) => m.toUpperCase())
  return new MailerError('invalid_body', `${name}: given more than once; it takes one value`, { param })
}

/**
 * The handler of one catalog route: authenticate from the headers, read the body (only then, so
 * an unauthenticated caller's body is never held and its 100 Continue never sent), then forward a
 * RouteRequest to the owning service's subject and answer its result. Also used by the dashboard's session-authenticated
 * copies of the admin routes.
 */
export const forwardRoute =
  (def: RouteDef, authenticate: (req: Request) => Promise<Caller>, deps: ForwardDeps) =>
  async (req: Request, res: Response) => {
    // A refusal before the body is read closes the connection unless it all came (read-body.ts);
    // one while reading it (413, invalid_body) is answered as the body parser always was.
    let reading = false
    try {
      const caller = await authenticate(req)
      reading = true
      await deps.readBody(req, res)
      const params: Record<string, string> = {}
      for (const [k, v] of Object.entries(req.params))
        if (k !== 'slug' || def.auth === 'admin') params[k] = String(v)
      const headers: Record<string, string> = {}
      for (const h of def.headers ?? []) {
        const given = req.headersDistinct[h]
        if (given === undefined) continue
        if (given.length > 1) throw givenTwice(h)
        headers[h] = headerText(given[0]!)
      }
      // A DELETE carries a body only where the route declares one (removing audience members).
      const body =
        def.method === 'GET' || (def.method === 'DELETE' && !def.body)
          ? undefined
          : jsonBody(req, { checksText: def.checksText ?? false })
      const message: RouteRequest = {
        caller,
        params,
        query: req.query as Record<string, unknown>,
        body,
        headers,
      }
      const result = await deps.bus.request(def.subject, message, { timeoutMs: deps.timeoutMs })
      res.status(successStatus(def, result)).json(result)
    } catch (err) {
      if (!reading) await closeIfBodyUnread(req, res)
      sendError(res, err, deps.logger, req.requestId)
    }
  }

/**
 * Registers every catalog route: authenticate (project key, admin key, or admin key on the
 * mirror), then forward a RouteRequest to the owning service's subject and answer its result.
 * Returns the path and method of each, for the 405 answer to other methods.
 */
export function registerApiRoutes(
  router: Router,
  routes: RouteDef[],
  deps: ForwardDeps & { auth: Authenticator },
): Served[] {
  const served: Served[] = []
  const forward = (def: RouteDef, authenticate: (req: Request) => Promise<Caller>) =>
    forwardRoute(def, authenticate, deps)

  for (const def of routes) {
    const method = def.method.toLowerCase() as 'get' | 'post' | 'patch' | 'put' | 'delete'
    if (def.auth === 'admin') {
      router[method](
        def.path,
        forward(def, (req) => (def.adminOnly ? deps.auth.adminOnly(req) : deps.auth.admin(req))),
      )
      served.push({ path: def.path, method: def.method })
      if (def.adminOnly && def.path.startsWith(`${MIRROR_PREFIX}/`)) {
        // Its project path, which project keys reach first (interface.md: they get 403 admin_only).
        const path = `/v1${def.path.slice(MIRROR_PREFIX.length)}`
        router[method](
          path,
          forward(def, (req) => deps.auth.refuseProjectKey(req)),
        )
        served.push({ path, method: def.method })
      }
    } else {
      router[method](
        def.path,
        forward(def, (req) => deps.auth.project(req)),
      )
      served.push({ path: def.path, method: def.method })
      if (def.mirror) {
        const path = mirrorPath(def.path)
        router[method](
          path,
          forward(def, (req) => deps.auth.mirror(req, String(req.params.slug))),
        )
        served.push({ path, method: def.method })
      }
    }
  }
  return served
}

/**
 * No route has this path. The path is not quoted back: what was asked for is quoted only in the
 * form of an id, slug or name (libs/contracts not-found.ts), and a path has no such form (a key
 * pasted into one would travel on in the message).
 */
export function notFound(): MailerError {
  return new MailerError(
    'route_not_found',
    'No route has this path (the API lists its routes at /openapi.json)',
  )
}

/** A path served with other methods (the Allow header lists them); the path is not quoted. */
export function methodNotAllowed(method: string): MailerError {
  return new MailerError(
    'method_not_allowed',
    `${method} is not allowed on this path; Allow lists the methods it takes`,
  )
}
