import { describe, expect, it } from 'vitest'
import { zeroCounts } from './aggregate.js'
import { histogramOf } from './histogram.js'
import { buildReport } from './report.js'
import { windowOf } from './time-buckets.js'

const now = new Date('2026-03-10T13:45:00Z')

describe('buildReport', () => {
  it('zero-fills contiguous buckets, sums totals and computes rates and percentiles', () => {
    const window = windowOf('7d', 'day', now)
    const r = buildReport({
      range: '7d',
      interval: 'day',
      window,
      rows: [
        { ...zeroCounts(), start: new Date('2026-03-05T00:00:00Z'), sent: 2, delivered: 1 },
        {
          ...zeroCounts(),
          start: new Date('2026-03-10T00:00:00Z'),
          sent: 1,
          delivered: 1,
          bounced: 1,
          complained: 1,
          clicked: 4,
        },
      ],
      hist: histogramOf([100, 100, 3000]),
      topTags: [{ value: 'plan:pro', count: 3 }],
      topBouncedDomains: [],
    })
    expect(r.buckets.map((b) => b.bucket)).toEqual([
      '2026-03-04T00:00:00.000Z',
      '2026-03-05T00:00:00.000Z',
      '2026-03-06T00:00:00.000Z',
      '2026-03-07T00:00:00.000Z',
      '2026-03-08T00:00:00.000Z',
      '2026-03-09T00:00:00.000Z',
      '2026-03-10T00:00:00.000Z',
    ])
    expect(r.buckets[0]).toEqual({ bucket: '2026-03-04T00:00:00.000Z', ...zeroCounts() })
    expect(r.buckets[1]).toMatchObject({ sent: 2, delivered: 1 })
    expect(r.totals).toEqual({
      ...zeroCounts(),
      sent: 3,
      delivered: 2,
      bounced: 1,
      complained: 1,
      clicked: 4,
    })
    expect(r).toMatchObject({
      range: '7d',
      interval: 'day',
      deliveryRate: 0.6667,
      bounceRate: 0.3333,
      complaintRate: 0.3333,
    })
    expect(r.p50DeliveryMs).toBeGreaterThan(79)
    expect(r.p50DeliveryMs).toBeLessThanOrEqual(100)
    expect(r.p95DeliveryMs).toBeGreaterThan(2511)
    expect(r.p95DeliveryMs).toBeLessThanOrEqual(3163)
    expect(r.topTags).toEqual([{ value: 'plan:pro', count: 3 }])
  })

  it('answers null rates and percentiles when nothing was sent or delivered', () => {
    const r = buildReport({
      range: '7d',
      interval: 'hour',
      window: windowOf('7d', 'hour', now),
      rows: [],
      hist: [],
      topTags: [],
      topBouncedDomains: [],
    })
    expect(r.buckets).toHaveLength(6 * 24 + 14)
    expect(r.totals).toEqual(zeroCounts())
    expect(r).toMatchObject({
      deliveryRate: null,
      bounceRate: null,
      complaintRate: null,
      p50DeliveryMs: null,
      p95DeliveryMs: null,
    })
  })
})
