import { useEffect, useRef, useState } from 'react'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'

export interface ChartSeries {
  label: string
  /** A CSS custom property holding the colour, e.g. `--c-delivered`. */
  colorVar: string
  values: (number | null)[]
}

/** Redraw when the theme changes (toggle or system), so axes and lines take the new colours. */
function useThemeKey(): number {
  const [key, setKey] = useState(0)
  useEffect(() => {
    const bump = () => setKey((k) => k + 1)
    const mq = window.matchMedia('(prefers-color-scheme: dark)')
    mq.addEventListener('change', bump)
    const mo = new MutationObserver(bump)
    mo.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] })
    return () => {
      mq.removeEventListener('change', bump)
      mo.disconnect()
    }
  }, [])
  return key
}

const cssVar = (name: string) =>
  getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888'

/**
 * uPlot draws time axes in the browser's zone by default, but analytics buckets are UTC hours and
 * days: west of UTC each day's point would sit on the evening before and carry that date. The
 * axes and the legend read times in UTC instead.
 */
const utcDate = (ts: number) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC')

/**
 * A uPlot chart that fills its container's width. `kind: 'bars'` draws grouped bars over the
 * category labels `categories`; otherwise lines over time (`x` in Unix seconds, shown in UTC;
 * `xLabel` writes one in the legend).
 */
export function Chart({
  label,
  x,
  series,
  kind = 'lines',
  categories,
  height = 260,
  unit,
  xLabel,
}: {
  label: string
  x: number[]
  series: ChartSeries[]
  kind?: 'lines' | 'bars'
  categories?: string[]
  height?: number
  unit?: string
  xLabel?: (ts: number) => string
}) {
  const box = useRef<HTMLDivElement>(null)
  const themeKey = useThemeKey()

  // biome-ignore lint/correctness/useExhaustiveDependencies: themeKey is the redraw trigger
  useEffect(() => {
    const el = box.current
    if (!el) return
    const axisColor = cssVar('--text-muted')
    const grid = cssVar('--border')
    // Two bar series sit either side of their category: the first ends at it, the second starts.
    const bars = (i: number) =>
      uPlot.paths.bars!({ size: [0.35, 60], gap: 2, align: series.length === 2 ? (i === 0 ? -1 : 1) : 0 })
    const opts: uPlot.Options = {
      width: Math.max(el.clientWidth, 240),
      height,
      legend: { show: true },
      ...(kind === 'bars' ? {} : { tzDate: utcDate }),
      cursor: { drag: { x: false, y: false } },
      scales: {
        ...(kind === 'bars'
          ? { x: { time: false, range: [-0.6, x.length - 0.4] as uPlot.Range.MinMax } }
          : {}),
        // Counts and durations start at zero, so a flat line does not look like a swing.
        y: {
          range: (_u: uPlot, _min: number, max: number): uPlot.Range.MinMax => [0, Math.max(max, 1) * 1.1],
        },
      },
      axes: [
        {
          stroke: axisColor,
          grid: { stroke: grid, width: 1 },
          ...(categories
            ? { values: (_u: uPlot, ticks: number[]) => ticks.map((t) => categories[t] ?? '') }
            : {}),
          ...(kind === 'bars' ? { splits: () => x } : {}),
        },
        { stroke: axisColor, grid: { stroke: grid, width: 1 }, size: 60, ...(unit ? { label: unit } : {}) },
      ],
      series: [
        {
          label: kind === 'bars' ? 'Range' : 'Time (UTC)',
          ...(categories ? { value: (_u: uPlot, v: number) => categories[v] ?? '' } : {}),
          ...(xLabel ? { value: (_u: uPlot, v: number | null) => (v === null ? '—' : xLabel(v)) } : {}),
        },
        ...series.map((s, i) => {
          const color = cssVar(s.colorVar)
          const base: uPlot.Series = { label: s.label, stroke: color, width: 2, points: { show: false } }
          return kind === 'bars' ? { ...base, fill: color, paths: bars(i) } : base
        }),
      ],
    }
    const plot = new uPlot(opts, [x, ...series.map((s) => s.values)] as uPlot.AlignedData, el)
    const ro = new ResizeObserver(() => plot.setSize({ width: Math.max(el.clientWidth, 240), height }))
    ro.observe(el)
    return () => {
      ro.disconnect()
      plot.destroy()
    }
  }, [x, series, kind, categories, height, unit, xLabel, themeKey])

  return <div className="chart" ref={box} role="img" aria-label={label} />
}
