import { fail } from '@mailer/contracts'

/** A declared template variable (`variables` of a template). */
export interface VariableSpec {
  name: string
  required: boolean
  example?: unknown
}

/** The value at a dotted path of `data`, or undefined. */
export function lookupPath(data: Record<string, unknown>, path: string): unknown {
  let cur: unknown = data
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, part)) return undefined
    cur = (cur as Record<string, unknown>)[part]
  }
  return cur
}

/**
 * Every required variable must have a value (not missing, not null). Throws 400
 * `invalid_template_data` with `param` = `data.<name>` for the first one that has none.
 */
export function checkRequired(variables: readonly VariableSpec[], data: Record<string, unknown>): void {
  for (const v of variables) {
    if (!v.required) continue
    const value = lookupPath(data, v.name)
    if (value === undefined || value === null) {
      throw fail('invalid_template_data', `The template needs a value for '${v.name}'`, `data.${v.name}`)
    }
  }
}

/**
 * The `data` object of a send or render: a plain object (absent = empty). Anything else is
 * 400 `invalid_template_data` with param `data`.
 */
export function templateData(data: unknown): Record<string, unknown> {
  if (data === undefined) return {}
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw fail('invalid_template_data', 'data must be an object of template variables', 'data')
  }
  return data as Record<string, unknown>
}

/**
 * Sets an own data property. A variable path is the author's text: `out[key] = v` with a key of
 * `__proto__` would set the object's prototype (`__proto__.x` wrote `x` onto Object.prototype,
 * for every object of the service), so every step goes through defineProperty and own properties.
 */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true })
}

/** Declared examples as a data object, for previews without data (`{ a: ex }`, dotted paths nested). */
export function exampleData(variables: readonly VariableSpec[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const v of variables) {
    if (v.example === undefined || v.example === null) continue
    const parts = v.name.split('.')
    let cur = out
    for (const p of parts.slice(0, -1)) {
      const next = Object.hasOwn(cur, p) ? cur[p] : undefined
      if (next === null || typeof next !== 'object') setOwn(cur, p, {})
      cur = cur[p] as Record<string, unknown>
    }
    setOwn(cur, parts[parts.length - 1]!, v.example)
  }
  return out
}
