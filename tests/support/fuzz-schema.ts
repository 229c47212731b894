import fc from 'fast-check'
import { z } from 'zod'

type Js = Record<string, any>

/**
 * Values a JSON Schema (zod's, of a route's body) describes: enough of the keywords the catalog
 * uses (types, enum, pattern, lengths, bounds, items, properties, anyOf, $ref) to build a body
 * that passes the schema's shape, so that one field made wrong is the only thing to refuse.
 */
function schemaValue(js: Js, defs: Record<string, Js>, depth: number): fc.Arbitrary<unknown> {
  if (js.$ref)
    return depth > 3 ? fc.constant(null) : schemaValue(defs[js.$ref.split('/').pop()] ?? {}, defs, depth + 1)
  if (js.enum) return fc.constantFrom(...(js.enum as unknown[]))
  if (js.anyOf) return fc.oneof(...(js.anyOf as Js[]).map((s) => schemaValue(s, defs, depth + 1)))
  const type = Array.isArray(js.type) ? js.type[0] : js.type
  switch (type) {
    case 'string':
      if (js.format === 'date-time')
        return fc
          .date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true })
          .map((d) => d.toISOString())
      if (js.pattern) return fc.stringMatching(new RegExp(js.pattern)).filter((s) => lengthOk(js, s))
      return fc.string({ minLength: js.minLength ?? 0, maxLength: Math.min(js.maxLength ?? 40, 40) })
    case 'integer':
      return fc.integer({ min: js.minimum ?? -1000, max: Math.min(js.maximum ?? 1000, 2 ** 31 - 1) })
    case 'number':
      return fc.double({ min: js.minimum ?? -1000, max: js.maximum ?? 1000, noNaN: true })
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    case 'array':
      return fc.array(schemaValue(js.items ?? {}, defs, depth + 1), {
        minLength: js.minItems ?? 0,
        maxLength: Math.min(js.maxItems ?? 3, 3),
      })
    case 'object': {
      const props = (js.properties ?? {}) as Record<string, Js>
      const required = new Set<string>(js.required ?? [])
      const record: Record<string, fc.Arbitrary<unknown>> = {}
      for (const [k, s] of Object.entries(props)) record[k] = schemaValue(s, defs, depth + 1)
      return fc.record(record, { requiredKeys: [...required].filter((k) => k in props) })
    }
    default:
      return fc.jsonValue({ maxDepth: 1 })
  }
}

const lengthOk = (js: Js, s: string) =>
  s.length >= (js.minLength ?? 0) && s.length <= (js.maxLength ?? Infinity)

/** A body of the schema's shape (an array body: of its items), or null for a schema without one. */
export function shapedValue(schema: z.ZodType | undefined): fc.Arbitrary<unknown> | null {
  if (!schema) return null
  const js = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Js
  if (js.type !== 'object' && js.type !== 'array') return null
  return schemaValue(js, (js.$defs ?? {}) as Record<string, Js>, 0)
}

/**
 * `base` with one thing made wrong: a field's value replaced by `odd`, a field removed, or a key
 * of no schema added (for an array body, in one of its items, or the array emptied).
 */
export function withOneFault(base: unknown, odd: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  if (Array.isArray(base)) {
    if (base.length === 0) return fc.constant(base)
    return fc
      .tuple(fc.nat({ max: base.length - 1 }), withOneFault(base[0], odd))
      .map(([i, item]) => base.map((b, j) => (j === i ? item : b)))
  }
  if (base === null || typeof base !== 'object') return odd
  const keys = Object.keys(base)
  const fault = fc.oneof(
    ...(keys.length
      ? [
          fc.tuple(fc.constantFrom(...keys), odd).map(([k, v]) => ({ ...base, [k]: v })),
          fc.constantFrom(...keys).map((k) => {
            const { [k]: _gone, ...rest } = base as Record<string, unknown>
            return rest
          }),
        ]
      : []),
    fc.tuple(fc.constantFrom('zz_unknown', '__proto__', 'constructor'), odd).map(([k, v]) => {
      const o = { ...base } as Record<string, unknown>
      Object.defineProperty(o, k, { value: v, enumerable: true, writable: true })
      return o
    }),
  )
  return fault
}
