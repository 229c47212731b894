import { ROUTES, type RouteDef } from '@mailer/contracts'
import { listKind, mirrorPath } from '@mailer/openapi'
import { z } from 'zod'

/**
 * A `fetch` for the SDK's clients that holds every 2xx answer to its route's response schema
 * (in the route's list wrapper): the schema must parse it, and it must hold no field the schema
 * does not name. The SDK's types are held to the same schemas at type-check time
 * (libs/client/test/contract-types.ts), so what the API really answers is what the types say.
 */
export function shapeCheckingFetch(problems: string[], checked: Set<string>): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init)
    const method = init?.method ?? 'GET'
    const url = new URL(String(input))
    const route = routeOf(method, url.pathname)
    if (!res.ok || !route?.response) return res
    const text = await res.clone().text()
    const where = `${method} ${route.path}`
    checked.add(where)
    for (const p of shapeProblems(route, JSON.parse(text))) problems.push(`${where}: ${p}`)
    return res
  }
}

const patterns = ROUTES.flatMap((r) => {
  const paths = r.auth === 'project' && r.mirror ? [r.path, mirrorPath(r.path)] : [r.path]
  return paths.map((p) => ({
    route: r,
    method: r.method,
    // Literal segments before parameters: /v1/emails/batch is not /v1/emails/:id.
    params: (p.match(/:/g) ?? []).length,
    re: new RegExp(`^${p.replace(/:[A-Za-z]+/g, '[^/]+')}$`),
  }))
}).sort((a, b) => a.params - b.params)

function routeOf(method: string, path: string): RouteDef | undefined {
  return patterns.find((p) => p.method === method && p.re.test(path))?.route
}

function shapeProblems(route: RouteDef, body: unknown): string[] {
  const kind = listKind(route)
  const item = route.response!
  const out: string[] = []
  let items = [body]
  if (kind) {
    const wrapper = kind === 'page' ? ['data', 'nextCursor'] : ['data']
    const keys = Object.keys(body as object).sort()
    if (keys.join() !== wrapper.join()) out.push(`wrapper ${keys.join()} (want ${wrapper.join()})`)
    items = (body as { data: unknown[] }).data
  }
  for (const it of items) {
    const parsed = item.safeParse(it)
    if (!parsed.success) out.push(z.prettifyError(parsed.error))
    out.push(...extraKeys(item, it, ''))
  }
  return out
}

/** Fields the answer has and the schema does not name (zod's parse drops them unsaid). */
function extraKeys(schema: z.ZodType, value: unknown, at: string): string[] {
  if (schema instanceof z.ZodNullable || schema instanceof z.ZodOptional)
    return value == null ? [] : extraKeys(schema.unwrap() as z.ZodType, value, at)
  if (schema instanceof z.ZodArray && Array.isArray(value))
    return value.flatMap((v, i) => extraKeys(schema.element as z.ZodType, v, `${at}${i}.`))
  if (!(schema instanceof z.ZodObject) || value === null || typeof value !== 'object') return []
  // A record-like object (catchall) names no fixed set of keys.
  if (!(schema.def.catchall === undefined || schema.def.catchall instanceof z.ZodNever)) return []
  const shape = schema.shape as Record<string, z.ZodType>
  return Object.entries(value).flatMap(([k, v]) =>
    k in shape ? extraKeys(shape[k]!, v, `${at}${k}.`) : [`unexpected field ${at}${k}`],
  )
}
