import type { z } from 'zod'

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'

/**
 * One REST route. The gateway registers every entry of the catalog and forwards it, as a
 * `RouteRequest`, to `subject`, where the owning service answers. Nothing route-specific lives
 * in the gateway beyond this table.
 */
export interface RouteDef {
  method: HttpMethod
  /** Express-style path, e.g. `/v1/emails/:id`. */
  path: string
  subject: string
  /**
   * - `project`: a project API key; with `mirror`, also served at
   *   `/v1/admin/projects/:slug<path without /v1>` for the admin key.
   * - `admin`: the admin key only (`/v1/admin/...`).
   */
  auth: 'project' | 'admin'
  mirror?: boolean
  /**
   * An admin route a project key is told it cannot use (403 `admin_only`) rather than "not the
   * admin key" (401 `invalid_api_key`, every other admin route): interface.md's domain setup. Its
   * project path (`/v1<path after :slug>`) is served too, refusing project keys the same way.
   */
  adminOnly?: boolean
  /** Success status; a function when it depends on the result (202 queued / 200 test). */
  status?: number | ((result: unknown) => number)
  /** Request headers forwarded to the service, lower-case. */
  headers?: string[]
  summary: string
  /**
   * A list route's wrapper, with `response` the schema of one item: `all` is `{ data: [...] }`
   * (never paginated), `page` is `{ data: [...], nextCursor }`. A GET whose query has `cursor`
   * is `page` when this is left out. Read by the OpenAPI generator and the SDK's catalog check.
   */
  list?: 'all' | 'page'
  /**
   * The handler checks its body's text itself (the sends, whose input check also serves
   * MailerRpc and answers a batch item's error in its place): the gateway checks only the body's
   * nesting, so the hot path does not walk the text twice.
   */
  checksText?: boolean
  body?: z.ZodType
  /**
   * The body the OpenAPI document shows, when `body` is looser than what is accepted (the
   * batch: its items are checked one by one by the handler). Defaults to `body`.
   */
  documentedBody?: z.ZodType
  query?: z.ZodType
  response?: z.ZodType
}

export const route = (def: RouteDef): RouteDef => def
