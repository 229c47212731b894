import { MailerError, type RouteRequest } from '@mailer/contracts'

const NUL = '\u0000'

/**
 * A route's path parameters and query, made safe for SQL whatever entry point they came from
 * (REST, AdminRpc, MailerRpc): PostgreSQL refuses a NUL character in any text value, which made
 * such a request a 500. A query value holding one is 400 `invalid_query` naming it; in a path
 * parameter it becomes U+FFFD, so the lookup finds nothing and the route answers its own 404 (no
 * id holds a NUL).
 */
export function safeRouteInput(req: RouteRequest): RouteRequest {
  for (const [k, v] of Object.entries(req.query ?? {})) {
    const values = Array.isArray(v) ? v : [v]
    if (values.some((x) => typeof x === 'string' && x.includes(NUL)))
      throw new MailerError('invalid_query', `${k}: cannot contain NUL characters`, { param: k })
  }
  if (!Object.values(req.params ?? {}).some((v) => typeof v === 'string' && v.includes(NUL))) return req
  const params: Record<string, string> = {}
  for (const [k, v] of Object.entries(req.params)) params[k] = String(v).replaceAll(NUL, '\uFFFD')
  return { ...req, params }
}
