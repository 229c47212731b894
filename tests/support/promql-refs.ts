/**
 * What a PromQL expression reads, found by a small scanner rather than a full parser: the
 * dashboard and alert expressions only use selectors, range vectors, functions, aggregations with
 * `by (…)`, `or`/`and` and comparisons, and that is what it understands. Enough to tell which
 * Mailer metrics and labels an expression needs, so that a renamed metric or label, which
 * Prometheus answers with an empty result rather than an error, fails a test instead.
 */

/** A metric an expression selects, with the label names its `{…}` matches on. */
export interface MetricRef {
  name: string
  labels: string[]
  /** The function whose argument it is (`rate`, `max`, …), or null at the top level. */
  enclosing: string | null
  at: number
}

/** A `by (…)` and the metrics of the expression it aggregates. */
export interface Grouping {
  labels: string[]
  metrics: string[]
}

export interface ExprRefs {
  metrics: MetricRef[]
  groupings: Grouping[]
}

/** Mailer's own metrics: `mailer_<service>_…` (libs/observability `Metrics`). */
export const METRIC_PREFIX = /^mailer_[a-z]+_[a-z0-9_]+$/

const IDENT = /[a-zA-Z_:][a-zA-Z0-9_:]*/y
const MATCHER = /([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"/g

/** The label names a selector's body (`a="x", b=~"y"`) matches on. */
export function selectorLabels(body: string): string[] {
  return [...body.matchAll(MATCHER)].map((m) => m[1]!).filter((l) => l !== '__name__')
}

/** Index just past the string starting at `start` (a quote), escapes included. */
function endOfString(expr: string, start: number): number {
  const q = expr[start]
  for (let i = start + 1; i < expr.length; i++) {
    if (expr[i] === '\\') i++
    else if (expr[i] === q) return i + 1
  }
  throw new Error(`unterminated string in: ${expr}`)
}

/** Index of the first `stop` character at or after `from` outside quoted strings. */
function find(expr: string, from: number, stop: string): number {
  for (let i = from; i < expr.length; ) {
    const c = expr[i]!
    if (c === '"' || c === "'" || c === '`') i = endOfString(expr, i)
    else if (c === stop) return i
    else i++
  }
  throw new Error(`no ${stop} after position ${from} in: ${expr}`)
}

const skipSpace = (expr: string, i: number) => {
  while (i < expr.length && /\s/.test(expr[i]!)) i++
  return i
}

/** The Mailer metrics (names matching `prefix`) an expression reads, and its groupings. */
export function exprRefs(expr: string, prefix = METRIC_PREFIX): ExprRefs {
  const metrics: MetricRef[] = []
  const spans: Array<{ labels: string[]; from: number; to: number }> = []
  // Each open parenthesis: where it is and the function (or aggregation) it belongs to.
  const open: Array<{ fn: string | null; at: number }> = []
  // Parenthesised groups, by where they open: where they close.
  const closes = new Map<number, number>()
  const groupings: Array<{ labels: string[]; after: number; before: number | null }> = []
  let lastIdent: string | null = null
  let lastClosedAt: number | null = null
  let i = 0
  while (i < expr.length) {
    const c = expr[i]!
    if (c === '"' || c === "'" || c === '`') {
      i = endOfString(expr, i)
      lastIdent = null
      continue
    }
    if (c === '(') {
      open.push({ fn: lastIdent, at: i })
      lastIdent = null
      i++
      continue
    }
    if (c === ')') {
      const o = open.pop()
      if (!o) throw new Error(`unbalanced parentheses in: ${expr}`)
      closes.set(o.at, i)
      lastClosedAt = o.at
      lastIdent = null
      i++
      continue
    }
    IDENT.lastIndex = i
    const m = IDENT.exec(expr)
    if (!m) {
      if (!/\s/.test(c)) lastIdent = null
      i++
      continue
    }
    const ident = m[0]
    let next = skipSpace(expr, i + ident.length)
    if ((ident === 'by' || ident === 'without') && expr[next] === '(') {
      const close = find(expr, next, ')')
      const labels = expr
        .slice(next + 1, close)
        .split(',')
        .map((l) => l.trim())
        .filter(Boolean)
      const after = skipSpace(expr, close + 1)
      // `sum by (x) (…)` aggregates the group that follows; `sum(…) by (x)` the one before.
      if (ident === 'by') groupings.push({ labels, after, before: expr[after] === '(' ? null : lastClosedAt })
      i = close + 1
      continue
    }
    if (prefix.test(ident) && expr[next] !== '(') {
      let labels: string[] = []
      if (expr[next] === '{') {
        const end = find(expr, next, '}')
        labels = selectorLabels(expr.slice(next + 1, end))
        next = end + 1
      }
      metrics.push({ name: ident, labels, enclosing: open.at(-1)?.fn ?? null, at: i })
      i = next
      lastIdent = null
      continue
    }
    lastIdent = ident
    i += ident.length
  }
  if (open.length) throw new Error(`unbalanced parentheses in: ${expr}`)
  for (const g of groupings) {
    const from = g.before ?? g.after
    spans.push({ labels: g.labels, from, to: closes.get(from) ?? from })
  }
  return {
    metrics,
    groupings: spans.map((g) => ({
      labels: g.labels,
      metrics: metrics.filter((r) => r.at > g.from && r.at < g.to).map((r) => r.name),
    })),
  }
}
