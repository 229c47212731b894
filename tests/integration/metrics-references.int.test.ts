import { useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  alertRules,
  DASHBOARDS,
  dashboardQueries,
  docRefs,
  type Query,
  runbooks,
} from '../support/metric-references.js'
import { exprRefs } from '../support/promql-refs.js'
import { TestRelay } from '../support/smtp-relay.js'
import { ALL_SERVICES, Stack } from '../support/stack.js'

/**
 * Every metric and label the Grafana dashboard, the chart's alerts and the docs name is one the
 * services expose. Prometheus answers a query for a metric or label that does not exist with an
 * empty result, not an error: a renamed metric leaves a panel empty and an alert that never fires.
 *
 * Names come from each service's /metrics page (`# TYPE` lines: prom-client lists every registered
 * metric there, used or not). Label names come from the registries' definitions, not the samples:
 * a labelled metric has no sample, hence no label on the page, until a label set is first used
 * (the relay breaker opening, a webhook timing out), which no short run of traffic covers.
 */
const te = useTestEnv()
let relay: TestRelay
let stack: Stack

// Set up as in production, where the metrics some settings leave out exist: the relay's breaker
// is only there with MAIL_TRANSPORT=smtp, the email pruner's counter with a retention (its first
// run is an hour after start, so it deletes nothing here).
beforeAll(async () => {
  relay = await TestRelay.start()
  stack = new Stack(te, { MAIL_TRANSPORT: 'smtp', SMTP_URL: relay.url, EMAIL_RETENTION_DAYS: '3650' })
  await stack.startAll(ALL_SERVICES)
}, 60_000)
afterAll(async () => {
  await stack.stopAll()
  await relay.stop()
})

/** Labels every scraped series gets from Prometheus's target (ServiceMonitor: service endpoints). */
const TARGET_LABELS = ['namespace', 'job', 'pod', 'instance', 'service', 'container', 'endpoint']
const RATES = new Set(['rate', 'irate', 'increase'])

interface Exposed {
  type: string
  labels: string[]
}

async function exposedMetrics(): Promise<Map<string, Exposed>> {
  const exposed = new Map<string, Exposed>()
  for (const s of ALL_SERVICES) {
    const page = await (await fetch(`http://127.0.0.1:${stack.metricsPort(s)}/metrics`)).text()
    const defined = new Map(
      stack
        .registry(s)
        .getMetricsAsArray()
        // prom-client keeps a metric's label names on the metric (`labelNames`); its types only
        // declare them in the constructor's config.
        .map((m) => [m.name, (m as unknown as { labelNames?: unknown }).labelNames] as const),
    )
    for (const [, name, type] of page.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      const labels = defined.get(name!)
      if (!Array.isArray(labels)) throw new Error(`${name}: no label names in ${s}'s registry`)
      exposed.set(name!, { type: type!, labels })
    }
  }
  return exposed
}

/** The series a name selects: a metric as exposed, or a histogram's _bucket, _sum or _count. */
function series(exposed: Map<string, Exposed>, name: string): { counter: boolean; labels: string[] } | null {
  const own = exposed.get(name)
  if (own) return { counter: own.type === 'counter', labels: own.labels }
  const part = /^(.+)_(bucket|sum|count)$/.exec(name)
  const h = part ? exposed.get(part[1]!) : undefined
  if (!part || h?.type !== 'histogram') return null
  return { counter: true, labels: part[2] === 'bucket' ? [...h.labels, 'le'] : h.labels }
}

function checkQuery(exposed: Map<string, Exposed>, q: Query, problems: string[]): void {
  const refs = exprRefs(q.expr)
  const available = (name: string) => [...(series(exposed, name)?.labels ?? []), ...TARGET_LABELS]
  for (const r of refs.metrics) {
    const s = series(exposed, r.name)
    if (!s) {
      problems.push(`${q.where}: ${r.name} is exposed by no service`)
      continue
    }
    for (const l of r.labels)
      if (!available(r.name).includes(l)) problems.push(`${q.where}: ${r.name} has no label "${l}"`)
    // A counter's value is its total since the process started: compared raw, it reads the
    // uptime of a pod, and every restart drops it to zero.
    if (s.counter && !q.seriesOnly && !RATES.has(r.enclosing ?? ''))
      problems.push(`${q.where}: counter ${r.name} read without rate()/increase()`)
  }
  for (const g of refs.groupings)
    for (const l of g.labels)
      for (const m of g.metrics)
        if (series(exposed, m) && !available(m).includes(l))
          problems.push(`${q.where}: by (${l}) but ${m} has no label "${l}"`)
  // What a legend or summary shows must survive the aggregation, or it shows nothing.
  const kept = refs.groupings.length
    ? refs.groupings.flatMap((g) => g.labels)
    : [...TARGET_LABELS, ...refs.metrics.flatMap((r) => available(r.name))]
  for (const l of q.shown)
    if (!kept.includes(l)) problems.push(`${q.where}: shows {{${l}}}, which the query does not keep`)
}

describe('metric references', () => {
  it('every dashboard query reads metrics and labels the services expose', async () => {
    const exposed = await exposedMetrics()
    const problems: string[] = []
    for (const path of DASHBOARDS) {
      const queries = dashboardQueries(path)
      expect(queries.length).toBeGreaterThan(10)
      for (const q of queries) {
        if (exprRefs(q.expr).metrics.length === 0) problems.push(`${q.where}: reads no Mailer metric`)
        checkQuery(exposed, q, problems)
      }
    }
    expect(problems).toEqual([])
  })

  it('every alert reads metrics and labels the services expose', async () => {
    const exposed = await exposedMetrics()
    const rules = alertRules()
    expect(rules.length).toBeGreaterThan(5)
    const problems: string[] = []
    for (const r of rules) checkQuery(exposed, r, problems)
    expect(problems).toEqual([])
  })

  it('every metric the docs name is exposed, with the labels they give it', async () => {
    const exposed = await exposedMetrics()
    const refs = docRefs(ALL_SERVICES)
    expect(refs.length).toBeGreaterThan(20)
    const problems: string[] = []
    for (const d of refs) {
      const s = series(exposed, d.name)
      if (!s) problems.push(`${d.where}: ${d.name} is exposed by no service`)
      else
        for (const l of d.labels)
          if (!s.labels.includes(l)) problems.push(`${d.where}: ${d.name} has no label "${l}"`)
    }
    expect(problems).toEqual([])
  })

  it('the alerts watch the ways in, the send queue, the relay, webhooks, every consumer and outbox', async () => {
    const exposed = await exposedMetrics()
    const alerted = new Set(alertRules().flatMap((r) => exprRefs(r.expr).metrics.map((m) => m.name)))
    const mustWatch = [
      'mailer_gateway_http_requests_total', // 5xx answered to REST callers
      'mailer_email_rpc_calls_total', // errors answered to in-cluster NATS callers
      'mailer_email_queue_oldest_seconds',
      'mailer_dispatcher_deliveries_total',
      'mailer_dispatcher_relay_breaker_open',
      'mailer_webhook_attempts_total',
      // Whichever service consumes a stream or publishes through an outbox: a backlog there
      // holds up emails, webhooks or analytics while every pod looks healthy.
      ...[...exposed.keys()].filter((n) =>
        /_(consumer_pending|outbox_publish_failures_total|outbox_unpublishable_total)$/.test(n),
      ),
    ]
    expect(mustWatch.filter((n) => !alerted.has(n))).toEqual([])
  })

  it('every alert waits a while before firing and has its runbook in docs/operations.md', () => {
    const rules = alertRules()
    const documented = runbooks()
    const problems: string[] = []
    for (const r of rules) {
      if (!r.for || !/^\d+[smh]$/.test(r.for)) problems.push(`${r.alert}: no "for:" duration`)
      if (!documented.includes(r.alert))
        problems.push(`${r.alert}: no "### ${r.alert}" in docs/operations.md`)
      if (r.runbook !== `docs/operations.md#${r.alert.toLowerCase()}`)
        problems.push(`${r.alert}: runbook annotation ${r.runbook} is not its docs/operations.md section`)
    }
    for (const d of documented)
      if (!rules.some((r) => r.alert === d))
        problems.push(`docs/operations.md describes ${d}, which no rule raises`)
    expect(problems).toEqual([])
  })
})
