import { describe, expect, it } from 'vitest'
import { bucketStart, utcDay, windowOf } from './time-buckets.js'

const now = new Date('2026-03-10T13:45:12.345Z')

describe('bucketStart', () => {
  it('floors to the UTC hour and day', () => {
    expect(bucketStart(now, 'hour').toISOString()).toBe('2026-03-10T13:00:00.000Z')
    expect(bucketStart(now, 'day').toISOString()).toBe('2026-03-10T00:00:00.000Z')
    expect(bucketStart(new Date('2026-03-10T00:00:00.000Z'), 'day').toISOString()).toBe(
      '2026-03-10T00:00:00.000Z',
    )
    expect(utcDay(new Date('2026-03-10T23:59:59.999+00:00'))).toBe('2026-03-10')
    expect(utcDay(new Date('2026-03-10T23:30:00-02:00'))).toBe('2026-03-11')
  })
})

describe('windowOf', () => {
  it('day buckets: the last N UTC days, today included', () => {
    const w = windowOf('7d', 'day', now)
    expect(w.starts).toHaveLength(7)
    expect(w.from.toISOString()).toBe('2026-03-04T00:00:00.000Z')
    expect(w.fromDay).toBe('2026-03-04')
    expect(w.to.toISOString()).toBe('2026-03-10T00:00:00.000Z')
    expect(w.starts.at(-1)!.toISOString()).toBe('2026-03-10T00:00:00.000Z')
    expect(windowOf('30d', 'day', now).starts).toHaveLength(30)
    expect(windowOf('90d', 'day', now).starts).toHaveLength(90)
  })

  it('hour buckets: the same days, up to the current hour, contiguous', () => {
    const w = windowOf('7d', 'hour', now)
    expect(w.from.toISOString()).toBe('2026-03-04T00:00:00.000Z')
    expect(w.to.toISOString()).toBe('2026-03-10T13:00:00.000Z')
    expect(w.starts).toHaveLength(6 * 24 + 14)
    for (let i = 1; i < w.starts.length; i++)
      expect(w.starts[i]!.getTime() - w.starts[i - 1]!.getTime()).toBe(3_600_000)
  })

  it('crosses month and year ends', () => {
    const w = windowOf('30d', 'day', new Date('2026-01-05T00:00:00Z'))
    expect(w.fromDay).toBe('2025-12-07')
    expect(w.starts).toHaveLength(30)
  })
})
