import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi'
import { z } from 'zod'

type Json = Record<string, unknown>

const registered = new WeakMap<OpenAPIRegistry, Map<string, Map<string, string>>>()

/**
 * zod's own JSON Schema output for a schema the OpenAPI generator cannot walk (a recursive one,
 * such as `z.json()`, overflows its stack). Recursive parts come out as `$defs`; they are moved
 * to `components.schemas` under `<prefix>_<name>` so that the references resolve in the document.
 */
export function zodJsonSchema(
  schema: z.ZodType,
  io: 'input' | 'output',
  prefix: string,
  registry: OpenAPIRegistry,
): Json {
  const js = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json
  delete js.$schema
  const defs = (js.$defs ?? {}) as Record<string, Json>
  delete js.$defs
  // The same recursive schema (z.json() in many routes) becomes one component, not one per route.
  const seen = registered.get(registry) ?? new Map<string, Map<string, string>>()
  registered.set(registry, seen)
  const key = JSON.stringify(defs)
  const known = seen.get(key)
  if (known) return relink(js, known)
  const names = new Map(Object.keys(defs).map((n) => [n, `${prefix}_${n.replace(/^_+/, '')}`]))
  seen.set(key, names)
  for (const [n, def] of Object.entries(defs))
    registry.registerComponent('schemas', names.get(n)!, relink(def, names))
  return relink(js, names)
}

/** Points `#/$defs/<name>` references at the components the definitions were moved to. */
function relink(value: Json, names: Map<string, string>): Json {
  const text = JSON.stringify(value).replace(/"#\/\$defs\/([^"]+)"/g, (_, n: string) =>
    JSON.stringify(`#/components/schemas/${names.get(n) ?? n}`),
  )
  return JSON.parse(text) as Json
}

/** A query schema as OpenAPI `in: query` parameters. */
export function queryParameters(js: Json): Json[] {
  const props = (js.properties ?? {}) as Record<string, Json>
  const required = new Set((js.required ?? []) as string[])
  return Object.entries(props).map(([name, schema]) => ({
    name,
    in: 'query',
    required: required.has(name),
    schema,
  }))
}
