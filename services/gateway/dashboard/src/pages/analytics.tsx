import { useCallback, useMemo } from 'react'
import { Chart, type ChartSeries } from '../components/chart.js'
import { AsyncView } from '../components/states.js'
import { Field, Page, Section, Table } from '../components/ui.js'
import { api, paths } from '../lib/api.js'
import { formatCount, formatMs, formatRate } from '../lib/format.js'
import { ProjectSelect } from '../lib/projects.js'
import { navigate, useLocation, withQuery } from '../lib/router.js'
import type { Analytics, AnalyticsCounts } from '../lib/types.js'
import { useResource } from '../lib/use-resource.js'

const RANGES = ['7d', '30d', '90d'] as const
const LINES: [keyof AnalyticsCounts, string][] = [
  ['sent', 'Sent'],
  ['delivered', 'Delivered'],
  ['bounced', 'Bounced'],
  ['opened', 'Opened'],
  ['clicked', 'Clicked'],
]

const fetchAnalytics = (project: string, range: string, interval: string) =>
  project
    ? api.get<Analytics>(paths.mirror(project, 'analytics'), { range, interval })
    : api.get<Analytics>('v1/admin/analytics', { range, interval })

function Totals({ a }: { a: Analytics }) {
  const cards: [string, string][] = [
    ['Sent', formatCount(a.totals.sent)],
    ['Delivered', formatCount(a.totals.delivered)],
    ['Delivery rate', formatRate(a.deliveryRate)],
    ['Bounce rate', formatRate(a.bounceRate)],
    ['Complaint rate', formatRate(a.complaintRate)],
    ['Opened', formatCount(a.totals.opened)],
    ['Clicked', formatCount(a.totals.clicked)],
    ['Median delivery', formatMs(a.p50DeliveryMs)],
    ['95th percentile', formatMs(a.p95DeliveryMs)],
  ]
  return (
    <ul className="stat-cards">
      {cards.map(([k, v]) => (
        <li key={k}>
          <span className="muted small">{k}</span>
          <strong>{v}</strong>
        </li>
      ))}
    </ul>
  )
}

/** A bucket's UTC start as the table and the chart's legend name it: `2026-03-04` or `2026-03-04 13:00`. */
const bucketLabel = (iso: string, interval: string): string =>
  interval === 'day' ? iso.slice(0, 10) : iso.slice(0, 16).replace('T', ' ')

function OverTime({ a }: { a: Analytics }) {
  const xLabel = useCallback(
    (ts: number) => `${bucketLabel(new Date(ts * 1000).toISOString(), a.interval)} UTC`,
    [a.interval],
  )
  const x = useMemo(() => a.buckets.map((b) => new Date(b.bucket).getTime() / 1000), [a])
  const series = useMemo<ChartSeries[]>(
    () => LINES.map(([k, label]) => ({ label, colorVar: `--c-${k}`, values: a.buckets.map((b) => b[k]) })),
    [a],
  )
  return (
    <>
      <Chart
        label={`Emails per ${a.interval}: ${LINES.map(([k, l]) => `${l} ${a.totals[k]}`).join(', ')}`}
        x={x}
        series={series}
        xLabel={xLabel}
      />
      <details>
        <summary>Show as a table</summary>
        <Table caption={`Emails per ${a.interval}`}>
          <thead>
            <tr>
              <th scope="col">{a.interval === 'day' ? 'Day (UTC)' : 'Hour (UTC)'}</th>
              {LINES.map(([k, l]) => (
                <th key={k} scope="col">
                  {l}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {a.buckets.map((b) => (
              <tr key={b.bucket}>
                <th scope="row">{bucketLabel(b.bucket, a.interval)}</th>
                {LINES.map(([k]) => (
                  <td key={k}>{b[k]}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </Table>
      </details>
    </>
  )
}

/** p50 and p95 delivery time over each range, side by side. */
function Percentiles({ project }: { project: string }) {
  const all = useResource(() => Promise.all(RANGES.map((r) => fetchAnalytics(project, r, 'day'))), [project])
  return (
    <AsyncView
      resource={all}
      what="delivery times"
      isEmpty={(list) => list.every((a) => a.p50DeliveryMs === null)}
      empty={<p>Nothing delivered in the last 90 days.</p>}
    >
      {(list) => (
        <Chart
          kind="bars"
          label={`Delivery time: ${list.map((a, i) => `${RANGES[i]} median ${formatMs(a.p50DeliveryMs)}, p95 ${formatMs(a.p95DeliveryMs)}`).join('; ')}`}
          x={RANGES.map((_, i) => i)}
          categories={RANGES.map((r) => `Last ${r}`)}
          unit="ms"
          height={220}
          series={[
            { label: 'Median (p50)', colorVar: '--c-delivered', values: list.map((a) => a.p50DeliveryMs) },
            { label: '95th percentile', colorVar: '--c-opened', values: list.map((a) => a.p95DeliveryMs) },
          ]}
        />
      )}
    </AsyncView>
  )
}

function TopList({ title, rows }: { title: string; rows: { value: string; count: number }[] }) {
  return (
    <Section title={title}>
      {rows.length === 0 ? (
        <p className="muted">None in this range.</p>
      ) : (
        <Table caption={title}>
          <tbody>
            {rows.map((r) => (
              <tr key={r.value}>
                <th scope="row" className="break">
                  {r.value}
                </th>
                <td>{formatCount(r.count)}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </Section>
  )
}

export function AnalyticsPage() {
  const { query } = useLocation()
  const project = query.get('project') ?? ''
  const range = RANGES.includes(query.get('range') as (typeof RANGES)[number])
    ? (query.get('range') as string)
    : '30d'
  const interval = range === '7d' && query.get('interval') === 'hour' ? 'hour' : 'day'
  const go = (p: Record<string, string>) =>
    navigate(withQuery('analytics', { project, range, interval, ...p }), { replace: true })
  const data = useResource(() => fetchAnalytics(project, range, interval), [project, range, interval], 60_000)
  return (
    <Page
      title="Analytics"
      lead="Live emails only, from the event stream, by UTC day or hour; figures lag the events by a moment."
    >
      <fieldset className="filters plain">
        <legend className="sr-only">Analytics options</legend>
        <Field label="Project">
          {(id) => (
            <ProjectSelect
              id={id}
              value={project}
              onChange={(p) => go({ project: p })}
              allLabel="All projects"
            />
          )}
        </Field>
        <Field label="Range">
          {(id) => (
            <select id={id} value={range} onChange={(e) => go({ range: e.target.value, interval: 'day' })}>
              {RANGES.map((r) => (
                <option key={r} value={r}>
                  Last {r}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Interval">
          {(id) => (
            <select id={id} value={interval} onChange={(e) => go({ interval: e.target.value })}>
              <option value="day">Day</option>
              {range === '7d' && <option value="hour">Hour</option>}
            </select>
          )}
        </Field>
      </fieldset>
      <AsyncView resource={data} what="analytics" isEmpty={() => false}>
        {(a) => (
          <>
            <Section title="Totals">
              <Totals a={a} />
            </Section>
            <Section title="Over time">
              <OverTime a={a} />
            </Section>
            <div className="two-col">
              <TopList title="Top tags" rows={a.topTags} />
              <TopList title="Most bounced domains" rows={a.topBouncedDomains} />
            </div>
          </>
        )}
      </AsyncView>
      <Section title="Delivery time">
        <Percentiles project={project} />
      </Section>
    </Page>
  )
}
