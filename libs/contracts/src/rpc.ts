import { z } from 'zod'
import type { HttpMethod, RouteDef } from './routes/define.js'
import { RPC } from './subjects.js'

/*
 * The in-cluster RPC protocol over NATS request-reply (interface.md part 4 "RPC", contract.md
 * part 6). Both the server side and the SDK's MailerRpcClient/AdminRpcClient follow this file.
 *
 * Replies, for both entrypoints: a success is the JSON result; a failure is the text
 * `SERVICE_ERROR:` followed by `{ type, code, message, param?, status? }` (the bus codec).
 * Every subject is prefixed by the deployment's NATS_PREFIX when one is set (`<prefix>.rpc...`).
 */

// --- MailerRpc ---------------------------------------------------------------------------

/**
 * `rpc.mailer.<method>`: `{ project: <slug>, args: [...] }`, the arguments after the slug in
 * order. The project must exist (404 `project_not_found`), be enabled (403 `project_disabled`)
 * and have `rpcEnabled` (403 `rpc_disabled`). Calls act live without an API key; sends are
 * recorded with source `rpc` (`batch` for sendBatch). No retries and no automatic idempotency key.
 */
export const MailerRpcRequest = z.object({
  project: z.string().min(1),
  args: z.array(z.unknown()).default([]),
})
export type MailerRpcRequest = z.infer<typeof MailerRpcRequest>

/** send's second argument: `idempotencyKey` is copied into the input and wins over its own. */
export const RpcSendOptions = z.object({ idempotencyKey: z.string().min(1).max(256).optional() })
export type RpcSendOptions = z.infer<typeof RpcSendOptions>

interface MailerRpcMethod {
  subject: string
  /** The REST route whose code the method runs (looked up in ROUTES by method and path). */
  route: { method: HttpMethod; path: string }
  /** The `args` array. Send inputs and list queries are checked by the route's own schemas. */
  args: z.ZodType
  /** What the reply holds, in words (the route's response schema gives the shape). */
  returns: string
}

export const MAILER_RPC_METHODS = {
  send: {
    subject: RPC.mailer.send,
    route: { method: 'POST', path: '/v1/emails' },
    // `null` for a left-out optional argument: JSON has no undefined (`[input, undefined]` is
    // `[input,null]` on the wire), so a caller passing its arguments on as they are sends it.
    args: z.tuple([z.unknown(), RpcSendOptions.nullish()]),
    returns: '{ id, status, idempotent? }',
  },
  sendBatch: {
    subject: RPC.mailer.sendBatch,
    route: { method: 'POST', path: '/v1/emails/batch' },
    // The inputs are the route's body, checked by the route as send's input is: sendBatch(null)
    // is its missing_body and a non-array its invalid_body, exactly what HTTP answers.
    args: z.tuple([z.unknown()]),
    returns: '{ data }: one result or { error } per input, in input order',
  },
  get: {
    subject: RPC.mailer.get,
    route: { method: 'GET', path: '/v1/emails/:id' },
    args: z.tuple([z.string().min(1)]),
    returns: 'the email record, or null when the project has no such email (never email_not_found)',
  },
  list: {
    subject: RPC.mailer.list,
    route: { method: 'GET', path: '/v1/emails' },
    args: z.tuple([z.record(z.string(), z.unknown()).nullish()]),
    returns: '{ data, nextCursor }',
  },
  cancel: {
    subject: RPC.mailer.cancel,
    route: { method: 'DELETE', path: '/v1/emails/:id' },
    args: z.tuple([z.string().min(1)]),
    returns: "{ id, status: 'canceled' }",
  },
} as const satisfies Record<string, MailerRpcMethod>

export type MailerRpcMethodName = keyof typeof MAILER_RPC_METHODS

// --- AdminRpc ----------------------------------------------------------------------------

/**
 * `rpc.admin.<operation>` runs the same code as the admin API. `<operation>` is the route's
 * subject without its `api.` prefix (`api.auth.projects.create` → `rpc.admin.auth.projects.create`).
 * Every admin route is an operation; so is every mirrored project route, which then needs
 * `project` (the slug the admin mirror takes from its path) and acts live without an API key,
 * exactly as `/v1/admin/projects/:slug/...`. Path parameters go in `params` by their route
 * names (`{ slug }` for `/v1/admin/projects/:slug`, `{ id }` for `/v1/emails/:id`), the query
 * string in `query`, the JSON body in `body`, and forwarded headers (lower-case, e.g.
 * `idempotency-key`) in `headers`. Errors are those of the route, plus 400 `invalid_body`
 * (param `project`) when a project operation has none or an admin operation has one, 400 `invalid_body` (param
 * `params.<name>`) when a path parameter of the route is missing or empty, and 404
 * `route_not_found` for an unknown operation when the server can tell.
 */
export const AdminRpcRequest = z.object({
  project: z.string().min(1).optional(),
  params: z.record(z.string(), z.string()).default({}),
  query: z.record(z.string(), z.string()).default({}),
  body: z.unknown().optional(),
  headers: z.record(z.string(), z.string()).default({}),
})
export type AdminRpcRequest = z.input<typeof AdminRpcRequest>

export interface AdminRpcOperation {
  /** e.g. `auth.projects.create` */
  operation: string
  /** e.g. `rpc.admin.auth.projects.create` (without the deployment prefix) */
  subject: string
  /** `admin`: an admin route; `project`: a mirrored project route, `project` required. */
  scope: 'admin' | 'project'
  route: RouteDef
}

/** `api.auth.projects.create` → `auth.projects.create`. */
export const adminRpcOperationName = (routeSubject: string): string => routeSubject.replace(/^api\./, '')

export const adminRpcSubject = (operation: string): string => `${RPC.adminPrefix}.${operation}`

/** Every AdminRpc operation of a route catalog (pass `ROUTES`). */
export function adminRpcOperations(routes: readonly RouteDef[]): AdminRpcOperation[] {
  const out: AdminRpcOperation[] = []
  for (const route of routes) {
    if (route.auth !== 'admin' && !route.mirror) continue
    const operation = adminRpcOperationName(route.subject)
    out.push({
      operation,
      subject: adminRpcSubject(operation),
      scope: route.auth === 'admin' ? 'admin' : 'project',
      route,
    })
  }
  return out
}
