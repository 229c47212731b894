import {
  AdminRpcRequest,
  adminRpcOperationName,
  adminRpcSubject,
  assertStorable,
  type Caller,
  isMailerError,
  MailerError,
  type ProjectRef,
  type RouteDef,
  requestIdFor,
} from '@mailer/contracts'
import { isDatabaseUnavailable } from '@mailer/db'
import type { Msg } from 'nats'
import { z } from 'zod'
import type { Bus } from './bus.js'
import { projectRef, projectResolver } from './project-resolver.js'
import type { RouteHandler } from './route-handlers.js'

/**
 * The request id of an RPC call: the caller's `X-Request-Id` NATS header when usable (as
 * the gateway takes it from HTTP), else a fresh one in the gateway's format.
 */
export function rpcRequestId(msg: Msg): string {
  return requestIdFor(msg.headers?.get('X-Request-Id'))
}

/**
 * Runs an RPC entry's work so that an unexpected failure is logged with the request id and
 * crosses the bus as 500 `internal` naming it (never a stack trace); MailerErrors pass as data.
 * PostgreSQL away or hung passes too, to be answered 503 `service_unavailable` by answer-error.ts
 * as on REST (turned into `internal` here, it was logged as a bug for an outage worth retrying).
 */
export async function guardRpc<T>(
  bus: Bus,
  subject: string,
  requestId: string,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work()
  } catch (err) {
    if (isMailerError(err) || isDatabaseUnavailable(err)) throw err
    bus.logger.error({ err, subject, requestId }, 'unexpected error while handling an RPC call')
    throw new MailerError('internal', `Internal error (request ${requestId})`)
  }
}

/** Only the headers the route declared, keys lower-cased (as the gateway forwards them). */
function declaredHeaders(route: RouteDef, given: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {}
  const wanted = new Set(route.headers ?? [])
  for (const [k, v] of Object.entries(given)) if (wanted.has(k.toLowerCase())) out[k.toLowerCase()] = v
  return out
}

/** The names of a route's path parameters (`/v1/webhooks/:id/deliveries/:deliveryId` → id, deliveryId). */
const pathParamNames = (route: RouteDef): string[] =>
  [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1] ?? '')

/**
 * Where an admin operation takes its project, for the error refusing `project` on it: that field
 * names the project of a mirrored project route only, and left silently unused on an admin
 * operation it dropped the caller's filter (every project's emails, analytics summed).
 */
function whereAdminTakesProject(route: RouteDef): string {
  if (pathParamNames(route).includes('slug')) return 'name the project in params.slug'
  const query = route.query
  if (query instanceof z.ZodObject && 'project' in query.shape) return 'name the project in query.project'
  return 'it acts on no one project'
}

/**
 * The route's path parameters, each required in `params` (over HTTP a path without one matches
 * no route): one left out or empty was handled as the empty id, a 404 for "" or, on
 * `email.suppressions.remove`, an answer as if the call had worked.
 */
function checkPathParams(names: string[], params: Record<string, string>): void {
  for (const name of names)
    if (!params[name])
      throw new MailerError('invalid_body', `params.${name} is required: the route's :${name}`, {
        param: `params.${name}`,
      })
}

/**
 * AdminRpc (libs/contracts/src/rpc.ts): serves `rpc.admin.<operation>` for one admin route or
 * mirrored project route with the route's own handler, so the admin API and AdminRpc cannot
 * drift apart. The caller is the admin; a project operation resolves `project` (the slug) and
 * then acts exactly as the admin mirror does: live, without an API key.
 */
export function serveAdminRpc(bus: Bus, queue: string, route: RouteDef, handler: RouteHandler): void {
  const operation = adminRpcOperationName(route.subject)
  const subject = adminRpcSubject(operation)
  const resolver = route.auth === 'admin' ? null : projectResolver(bus)
  // The gateway sends no body on GET, nor on a DELETE that declares none.
  const takesBody = route.method !== 'GET' && !(route.method === 'DELETE' && !route.body)
  const required = pathParamNames(route)

  bus.serve(
    subject,
    AdminRpcRequest,
    (req, msg) => {
      const requestId = rpcRequestId(msg)
      return guardRpc(bus, subject, requestId, async () => {
        let project: ProjectRef | null = null
        let params = req.params
        if (resolver) {
          if (!req.project)
            throw new MailerError(
              'invalid_body',
              `${operation} acts on one project: name it by slug in 'project'`,
              {
                param: 'project',
              },
            )
          project = projectRef(await resolver.resolve(req.project))
          // As on the mirror, the slug picks the project; it is not a parameter of the route.
          const { slug: _slug, ...rest } = params
          params = rest
        } else if (req.project !== undefined) {
          throw new MailerError(
            'invalid_body',
            `${operation} is an admin operation, not one of a project: ${whereAdminTakesProject(route)}`,
            { param: 'project' },
          )
        }
        checkPathParams(required, params)
        const body = takesBody ? req.body : undefined
        // What the gateway refuses in an HTTP body (NUL, lone surrogates, deep nesting) is refused
        // here too: no route could store it, and it would fail in PostgreSQL as a 500.
        assertStorable(body, { text: !route.checksText })
        const caller: Caller = { requestId, via: 'admin', project, apiKeyId: null, mode: 'live' }
        return handler({
          caller,
          params,
          query: req.query,
          body,
          headers: declaredHeaders(route, req.headers),
        })
      })
    },
    { queue },
  )
}
