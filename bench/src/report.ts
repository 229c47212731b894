import type { AcceptRow, BatchRow } from './phases-accept.js'
import type { FlowRow } from './phases-flow.js'

export interface BenchReport {
  startedAt: Date
  conditions: string[]
  accept: AcceptRow[]
  baseline: AcceptRow[]
  batch: BatchRow | null
  e2e: FlowRow | null
  e2eLatency: FlowRow | null
  webhooks: FlowRow | null
  webhookCount: number
  rss: Array<{ name: string; peakMiB: number | null }>
  notes: string[]
}

const n = (v: number, digits = 0) => (Number.isFinite(v) ? v.toFixed(digits) : '–')
const ms = (v: number) => (Number.isFinite(v) ? `${n(v, v < 10 ? 1 : 0)} ms` : '–')
const mark = (ok: boolean) => (ok ? 'met' : '**missed**')

function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n')
}

/** The targets of issue #7 against what this run measured. */
function targets(r: BenchReport): string[][] {
  const at = (rows: AcceptRow[], c: number) => rows.find((x) => x.connections === c)
  const best = Math.max(0, ...r.accept.map((x) => x.okPerSecond))
  const c32 = at(r.accept, 32)
  const out: string[][] = [
    ['accept, single sends', '≥ 2,000 emails/s', `${n(best)} emails/s (best level)`, mark(best >= 2_000)],
  ]
  if (c32)
    out.push([
      'accept p99 at concurrency 32',
      '≤ 25 ms',
      ms(c32.latencyMs.p99),
      mark(c32.latencyMs.p99 <= 25),
    ])
  if (r.batch)
    out.push([
      'accept through batch',
      '≥ 20,000 emails/s',
      `${n(r.batch.emailsPerSecond)} emails/s`,
      mark(r.batch.emailsPerSecond >= 20_000),
    ])
  if (r.e2e)
    out.push([
      'end to end',
      '≥ 1,000 emails/s',
      `${n(r.e2e.perSecond)} emails/s`,
      mark(r.e2e.perSecond >= 1_000),
    ])
  if (r.webhooks)
    out.push([
      'webhook fan-out',
      '≥ 2,000 deliveries/s',
      `${n(r.webhooks.perSecond)} deliveries/s`,
      mark(r.webhooks.perSecond >= 2_000),
    ])
  for (const m of r.accept) {
    const b = at(r.baseline, m.connections)
    if (!b) continue
    const ratio = m.okPerSecond / b.okPerSecond
    out.push([
      `accept vs baseline, concurrency ${m.connections}`,
      '≥ 50 %',
      `${n(ratio * 100)} %`,
      mark(ratio >= 0.5),
    ])
  }
  return out
}

/**
 * CPU milliseconds per accepted email, by process, for each accept level and the batch phase. An
 * accept level's total is also given as a multiple of the baseline's at the same concurrency: the
 * machine's speed drifts between runs, and the multiple shows what the code costs regardless.
 */
function cpuTable(r: BenchReport): string[] {
  const rows: Array<{ label: string; emails: number; cpu: Map<string, number>; baselineOf?: string }> = []
  for (const x of [...r.baseline, ...r.accept])
    if (x.cpu)
      rows.push({
        label: `${x.target} c=${x.connections}`,
        emails: x.okPerSecond * x.seconds,
        cpu: x.cpu,
        ...(x.target === 'mailer' ? { baselineOf: `baseline c=${x.connections}` } : {}),
      })
  if (r.e2e?.cpu)
    rows.push({ label: 'end to end (per delivered email)', emails: r.e2e.delivered, cpu: r.e2e.cpu })
  if (r.webhooks?.cpu)
    rows.push({ label: 'webhook fan-out (per delivery)', emails: r.webhooks.delivered, cpu: r.webhooks.cpu })
  if (r.batch?.cpu)
    rows.push({ label: 'batch c=8', emails: r.batch.emailsPerSecond * r.batch.seconds, cpu: r.batch.cpu })
  if (rows.length === 0) return []
  const names = [...new Set(rows.flatMap((x) => [...x.cpu.keys()]))]
  const total = (x: (typeof rows)[number]) =>
    ([...x.cpu.values()].reduce((a, b) => a + b, 0) * 1000) / Math.max(1, x.emails)
  const totals = new Map(rows.map((x) => [x.label, total(x)]))
  const body = rows.map((x) => {
    const base = x.baselineOf ? totals.get(x.baselineOf) : undefined
    return [
      x.label,
      ...names.map((n) => n_(((x.cpu.get(n) ?? 0) * 1000) / Math.max(1, x.emails))),
      n_(total(x)),
      base ? `${(total(x) / base).toFixed(1)} ×` : '',
    ]
  })
  return [
    '',
    '## CPU per email or delivery (ms, from /proc/<pid>/stat; "bench" is the load generator)',
    '',
    table(['phase', ...names, 'total', 'of baseline'], body),
  ]
}
const n_ = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : '–')

export function renderReport(r: BenchReport): string {
  const acceptRows = [...r.baseline, ...r.accept].map((x) => {
    const b = r.baseline.find((y) => y.connections === x.connections)
    const ratio = x.target === 'mailer' && b ? `${n((x.okPerSecond / b.okPerSecond) * 100)} %` : ''
    return [
      x.target,
      String(x.connections),
      n(x.okPerSecond),
      ms(x.latencyMs.p50),
      ms(x.latencyMs.p99),
      ms(x.latencyMs.max),
      String(x.errors),
      ratio,
    ]
  })
  const flow = (label: string, f: FlowRow | null, unit: string) =>
    f
      ? [
          label,
          f.rate ? `${f.rate} req/s` : `${f.connections} conns`,
          String(f.accepted),
          String(f.delivered),
          String(f.duplicates),
          `${n(f.perSecond)} ${unit}/s`,
          ms(f.latencyMs.p50),
          ms(f.latencyMs.p99),
          ms(f.latencyMs.max),
        ]
      : null
  const flows = [
    flow('end to end (throughput)', r.e2e, 'emails'),
    flow('end to end (latency)', r.e2eLatency, 'emails'),
    flow(`webhook fan-out (${r.webhookCount} webhooks)`, r.webhooks, 'deliveries'),
  ].filter((x): x is string[] => x !== null)

  const parts = [
    `# Mailer bench, ${r.startedAt.toISOString()}`,
    '',
    '## Conditions',
    '',
    ...r.conditions.map((c) => `- ${c}`),
    '',
    '## Targets',
    '',
    table(['what', 'target', 'measured', ''], targets(r)),
    '',
    '## Accept (`POST /v1/emails`, live key)',
    '',
    table(['target', 'connections', '2xx/s', 'p50', 'p99', 'max', 'errors', 'of baseline'], acceptRows),
  ]
  if (r.batch) {
    const b = r.batch
    parts.push(
      '',
      '## Batch (`POST /v1/emails/batch`, 100 emails each)',
      '',
      table(
        ['connections', 'requests/s', 'emails/s', 'p50', 'p99', 'max', 'errors', 'item errors'],
        [
          [
            String(b.connections),
            n(b.requestsPerSecond, 1),
            n(b.emailsPerSecond),
            ms(b.latencyMs.p50),
            ms(b.latencyMs.p99),
            ms(b.latencyMs.max),
            String(b.errors),
            String(b.itemErrors),
          ],
        ],
      ),
    )
  }
  if (flows.length)
    parts.push(
      '',
      '## Flows (latency: accept → SMTP sink, or event `createdAt` → webhook receiver)',
      '',
      table(['phase', 'offered', 'accepted', 'delivered', 'duplicates', 'rate', 'p50', 'p99', 'max'], flows),
    )
  parts.push(...cpuTable(r))
  parts.push(
    '',
    '## Peak RSS (VmHWM)',
    '',
    table(
      ['process', 'MiB'],
      r.rss.map((x) => [x.name, x.peakMiB === null ? '–' : String(x.peakMiB)]),
    ),
  )
  if (r.notes.length) parts.push('', '## Notes', '', ...r.notes.map((x) => `- ${x}`))
  return `${parts.join('\n')}\n`
}
