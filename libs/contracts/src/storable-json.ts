import { MailerError } from './errors.js'

/** Deepest nesting a request body may have: far more than any route's schema uses. */
export const MAX_JSON_DEPTH = 64

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

function textProblem(s: string): string | null {
  if (s.includes('\u0000')) return 'text cannot contain NUL characters'
  if (LONE_SURROGATE.test(s)) return 'text cannot contain a lone UTF-16 surrogate (\\ud800-\\udfff)'
  return null
}

/**
 * The first place in a parsed JSON body that could not be stored or passed on: a string or key
 * holding a NUL character (PostgreSQL text and jsonb refuse it), or a lone UTF-16 surrogate
 * (`"\ud800"` is valid JSON, but jsonb refuses it), or nesting deeper than MAX_JSON_DEPTH (encoding
 * it again for the bus overflowed the stack). Null when there is none.
 */
export function unstorablePart(
  value: unknown,
  path: string[] = [],
  /** False: only the nesting is checked (the text is checked later, piece by piece). */
  text = true,
): { path: string; problem: string } | null {
  if (typeof value === 'string') {
    if (!text) return null
    const problem = textProblem(value)
    return problem ? { path: path.join('.'), problem } : null
  }
  if (value === null || typeof value !== 'object') return null
  if (path.length >= MAX_JSON_DEPTH)
    return { path: path.join('.'), problem: `nested more than ${MAX_JSON_DEPTH} levels deep` }
  for (const [k, x] of Object.entries(value as Record<string, unknown>)) {
    const problem = text ? textProblem(k) : null
    if (problem) return { path: [...path, k].join('.'), problem }
    const hit = unstorablePart(x, [...path, k], text)
    if (hit) return hit
  }
  return null
}

/** 400 `invalid_body` naming the first unstorable part of a body (unstorablePart), if any. */
export function assertStorable(value: unknown, opts: { text?: boolean } = {}): void {
  const hit = unstorablePart(value, [], opts.text ?? true)
  if (!hit) return
  throw new MailerError(
    'invalid_body',
    `${hit.path || 'body'}: ${hit.problem}`,
    hit.path ? { param: hit.path } : {},
  )
}
