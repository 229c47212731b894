import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * Everything operators read Mailer's metrics through, as written in the repository: the Grafana
 * dashboard, the chart's PrometheusRule and the docs' metric names. Read from the files rather
 * than a rendered chart so that the check needs no helm binary.
 */
export const ROOT = join(import.meta.dirname, '../..')
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')

/** A PromQL expression and where it is, with the labels its legend or summary shows. */
export interface Query {
  where: string
  expr: string
  /** `{{label}}` of a panel's legend, `$labels.label` of an alert's summary. */
  shown: string[]
  /** Reads which series exist, not their values (a variable's `label_values`). */
  seriesOnly?: boolean
}

export const DASHBOARDS = ['deploy/grafana/mailer.json', 'helm/mailer/dashboards/mailer.json']

interface Panel {
  title?: string
  targets?: Array<{ expr?: string; legendFormat?: string }>
  panels?: Panel[]
}

export function dashboardQueries(path: string): Query[] {
  const dash = JSON.parse(read(path)) as {
    panels: Panel[]
    templating?: { list?: Array<{ name: string; query?: string | { query?: string } }> }
  }
  const out: Query[] = []
  const walk = (panels: Panel[]) => {
    for (const p of panels) {
      for (const t of p.targets ?? [])
        out.push({
          where: `${path} panel "${p.title}"`,
          expr: t.expr ?? '',
          shown: [...(t.legendFormat ?? '').matchAll(/\{\{\s*([a-zA-Z_]\w*)\s*\}\}/g)].map((m) => m[1]!),
        })
      walk(p.panels ?? [])
    }
  }
  walk(dash.panels)
  for (const v of dash.templating?.list ?? []) {
    const q = typeof v.query === 'string' ? v.query : v.query?.query
    // label_values(metric, label): the label is read off the metric as a selector would.
    const lv = q && /^label_values\(\s*([a-zA-Z_:]\w*)\s*,\s*(\w+)\s*\)$/.exec(q.trim())
    if (lv)
      out.push({
        where: `${path} variable $${v.name}`,
        expr: `${lv[1]}{${lv[2]}!=""}`,
        shown: [],
        seriesOnly: true,
      })
    else if (q && /mailer_/.test(q)) out.push({ where: `${path} variable $${v.name}`, expr: q, shown: [] })
  }
  return out
}

export interface AlertRule extends Query {
  alert: string
  for: string | null
  runbook: string | null
}

export const RULES = 'helm/mailer/templates/prometheusrule.yaml'

/**
 * The alerts of the chart's PrometheusRule template. Template actions (`{{ $sel }}`, the
 * thresholds) are dropped from the expressions: they only add the release's namespace and job
 * selector, which Prometheus's target labels carry, and numbers.
 */
export function alertRules(): AlertRule[] {
  const lines = read(RULES).split('\n')
  const rules: AlertRule[] = []
  for (let i = 0; i < lines.length; i++) {
    const head = /^(\s*)- alert:\s*(\S+)/.exec(lines[i]!)
    if (!head) continue
    const body: string[] = []
    const indent = head[1]!.length
    for (let j = i + 1; j < lines.length; j++) {
      const l = lines[j]!
      if (l.trim() && (l.search(/\S/) <= indent || /^\s*\{\{-?\s*end/.test(l))) break
      body.push(l)
    }
    const field = (name: string) => body.find((l) => new RegExp(`^\\s*${name}:`).test(l))
    const exprAt = body.findIndex((l) => /^\s*expr:/.test(l))
    let expr = ''
    if (exprAt >= 0) {
      const inline = body[exprAt]!.replace(/^\s*expr:\s*/, '')
      if (inline.trim() === '|' || inline.trim() === '>') {
        const own = body[exprAt]!.search(/\S/)
        const block: string[] = []
        for (const l of body.slice(exprAt + 1)) {
          if (l.trim() && l.search(/\S/) <= own) break
          block.push(l)
        }
        expr = block.join('\n')
      } else expr = inline
    }
    const summary = field('summary') ?? ''
    rules.push({
      where: `${RULES} alert ${head[2]}`,
      alert: head[2]!,
      expr: expr.replace(/\{\{.*?\}\}/g, ' ').trim(),
      shown: [...summary.matchAll(/\$labels\.(\w+)/g)].map((m) => m[1]!),
      for:
        field('for')
          ?.replace(/^\s*for:\s*/, '')
          .trim() ?? null,
      runbook:
        field('runbook')
          ?.replace(/^\s*runbook:\s*/, '')
          .trim() ?? null,
    })
  }
  return rules
}

/** A metric a doc names, with the labels it shows in `{…}`. */
export interface DocRef {
  where: string
  name: string
  labels: string[]
}

const SPAN = /`([^`]+)`/g
const NAME = /^([a-z][a-z0-9_]*[a-z0-9])\s*(?:\{([^}]*)\})?$/
const labelsOf = (body: string | undefined) =>
  (body ?? '')
    .split(',')
    .map((item) => /^\s*([a-zA-Z_]\w*)/.exec(item)?.[1])
    .filter((l): l is string => !!l)

/**
 * Metric names in the docs (every `docs/*.md`, the services' and libraries' READMEs): written in
 * full in code spans (`mailer_email_accepted_total{source,mode}`), or short in a list item that
 * gives the prefix first (`- Metrics (`mailer_email_`): `accepted_total{source,mode}`, …`), where
 * a span with an underscore is a name and one without is a label value (`delivered`).
 */
export function docRefs(services: readonly string[]): DocRef[] {
  const files = [
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
    ...['services', 'libs'].flatMap((dir) =>
      readdirSync(join(ROOT, dir))
        .map((d) => `${dir}/${d}/README.md`)
        .filter((f) => {
          try {
            read(f)
            return true
          } catch {
            return false
          }
        }),
    ),
  ]
  const full = new RegExp(`^mailer_(?:${services.join('|')})_`)
  const out: DocRef[] = []
  for (const file of files) {
    const lines = read(file).split('\n')
    // A list item runs from its `- ` to the next item, blank line or heading.
    let item = { text: '', line: 0 }
    const items: Array<typeof item> = []
    for (const [n, l] of lines.entries()) {
      if (/^\s*([-*]|\d+\.)\s/.test(l) || !l.trim() || l.startsWith('#')) {
        if (item.text) items.push(item)
        item = { text: l.trim() ? l : '', line: n + 1 }
      } else item.text += `\n${l}`
    }
    if (item.text) items.push(item)
    for (const it of items) {
      const prefix = new RegExp(`\\(\`(mailer_(?:${services.join('|')})_)\\*?\`\\)`).exec(it.text)?.[1]
      for (const span of it.text.matchAll(SPAN)) {
        const m = NAME.exec(span[1]!.replace(/\s+/g, ' ').trim())
        if (!m) continue
        const where = `${file}:${it.line}`
        if (full.test(m[1]!)) out.push({ where, name: m[1]!, labels: labelsOf(m[2]) })
        else if (prefix && m[1]!.includes('_') && !m[1]!.startsWith('mailer_'))
          out.push({ where, name: prefix + m[1], labels: labelsOf(m[2]) })
      }
    }
  }
  return out
}

/** The `### Name` headings of docs/operations.md's "Alerts" section: its runbooks. */
export function runbooks(): string[] {
  const text = read('docs/operations.md')
  const section = /\n## Alerts\n([\s\S]*?)(\n## |$)/.exec(text)?.[1] ?? ''
  return [...section.matchAll(/^### (\S+)/gm)].map((m) => m[1]!)
}
