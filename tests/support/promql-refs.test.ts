import { describe, expect, it } from 'vitest'
import { exprRefs } from './promql-refs.js'

describe('exprRefs', () => {
  it('finds each Mailer metric with its selector labels and the function it sits in', () => {
    const r = exprRefs(
      'sum(rate(mailer_gateway_http_requests_total{namespace="x", status=~"5.(x)"}[5m])) / up{job="a"} > 0.5',
    )
    expect(r.metrics.map(({ name, labels, enclosing }) => ({ name, labels, enclosing }))).toEqual([
      { name: 'mailer_gateway_http_requests_total', labels: ['namespace', 'status'], enclosing: 'rate' },
    ])
  })

  it('ties a by (…) to the metrics it aggregates, written before or after', () => {
    const before = exprRefs(
      'max by (consumer) (mailer_a_pending{x="1"} or mailer_b_pending) + max(mailer_c_depth) by (job)',
    )
    expect(before.groupings).toEqual([
      { labels: ['consumer'], metrics: ['mailer_a_pending', 'mailer_b_pending'] },
      { labels: ['job'], metrics: ['mailer_c_depth'] },
    ])
    expect(before.metrics.map((m) => m.enclosing)).toEqual(['max', 'max', 'max'])
  })

  it('reads no metric in strings, functions or the names it does not own', () => {
    const r = exprRefs('histogram_quantile(0.9, sum by (le) (rate(node_cpu{a="mailer_x_total"}[1m])))')
    expect(r.metrics).toEqual([])
    expect(r.groupings).toEqual([{ labels: ['le'], metrics: [] }])
  })
})
