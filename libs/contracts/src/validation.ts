import { z } from 'zod'
import { MailerError } from './errors.js'

function firstIssue(error: z.ZodError): { path: string; message: string } {
  const issue = error.issues[0]
  const segments = (issue?.path ?? []).map(String)
  // An unknown field is reported on the field itself, not on the object holding it.
  if (issue?.code === 'unrecognized_keys' && issue.keys[0] !== undefined) segments.push(issue.keys[0])
  const path = segments.join('.')
  return { path, message: issue?.message ?? 'Invalid value' }
}

/**
 * Parses a request body. `undefined` (no body at all) is `missing_body`; a schema failure is
 * `invalid_body` with `param` set to the dotted path of the first problem (contract.md part 0).
 * A schema may attach its own code to an issue with `params: { code }` (for example
 * `too_many_recipients`).
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  if (body === undefined || body === null) throw new MailerError('missing_body', 'A JSON body is required')
  const res = schema.safeParse(body)
  if (res.success) return res.data
  const issue = res.error.issues[0] as (z.core.$ZodIssue & { params?: { code?: string } }) | undefined
  const { path, message } = firstIssue(res.error)
  const code = issue?.code === 'custom' && issue.params?.code ? issue.params.code : 'invalid_body'
  throw new MailerError(code, path ? `${path}: ${message}` : message, path ? { param: path } : {})
}

/**
 * Parses the body of a route whose body is optional: none is read as `{}`. JSON `null` is a body,
 * just not one such a route takes, so it is `invalid_body`: `missing_body` would say one is needed.
 */
export function parseOptionalBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  if (body === null)
    throw new MailerError('invalid_body', 'JSON null is not a body this route takes: send none or an object')
  return parseBody(schema, body ?? {})
}

/** The parameters a query schema knows (an object, possibly behind a pipe such as a transform). */
function queryKeys(schema: z.ZodType): Set<string> {
  if (schema instanceof z.ZodObject) return new Set(Object.keys(schema.shape))
  if (schema instanceof z.ZodPipe) return queryKeys(schema.in as z.ZodType)
  return new Set()
}

/**
 * Query parameters are plain strings, one each (interface.md). Express reads `project[]=a` (or
 * `project[0]=a`) as a parameter named `project[]`, which the schema used to ignore as unknown,
 * so the route quietly answered without the filter (`/v1/admin/analytics?project[]=alpha`
 * summed every project), and `project=a&project=b` as a list. Either copy of a known parameter
 * is `invalid_query` naming it; unknown parameters are still ignored, bracketed or repeated.
 */
function refuseListedParams(known: Set<string>, query: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(query)) {
    const base = /^([^[\]]+)\[/.exec(k)?.[1]
    if (base !== undefined && known.has(base)) {
      const message = `${k}: ${base} takes one plain value (${base}=<value>), not a list`
      throw new MailerError('invalid_query', message, { param: base })
    }
    if (known.has(k) && (Array.isArray(v) || (typeof v === 'object' && v !== null)))
      throw new MailerError('invalid_query', `${k}: given more than once; it takes one value`, { param: k })
  }
}

/** Parses query parameters; failures are `invalid_query` with `param` naming the parameter. */
export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.infer<S> {
  if (typeof query === 'object' && query !== null)
    refuseListedParams(queryKeys(schema), query as Record<string, unknown>)
  const res = schema.safeParse(query ?? {})
  if (res.success) return res.data
  const { path, message } = firstIssue(res.error)
  throw new MailerError('invalid_query', path ? `${path}: ${message}` : message, path ? { param: path } : {})
}
