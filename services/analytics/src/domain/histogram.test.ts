import { describe, expect, it } from 'vitest'
import {
  addInto,
  emptyHistogram,
  HIST_BOUNDS_MS,
  HIST_SLOTS,
  histogramOf,
  quantile,
  slotOf,
  slotRange,
} from './histogram.js'

describe('histogram bounds', () => {
  it('are ten log-spaced slots per decade from 1 ms to 10^8 ms plus an overflow slot', () => {
    expect(HIST_BOUNDS_MS).toHaveLength(81)
    expect(HIST_SLOTS).toBe(82)
    expect(HIST_BOUNDS_MS[0]).toBe(1)
    expect(HIST_BOUNDS_MS[10]).toBeCloseTo(10, 9)
    expect(HIST_BOUNDS_MS[30]).toBeCloseTo(1000, 6)
    expect(HIST_BOUNDS_MS[80]).toBeCloseTo(1e8, 0)
    for (let i = 1; i < HIST_BOUNDS_MS.length; i++)
      expect(HIST_BOUNDS_MS[i]! / HIST_BOUNDS_MS[i - 1]!).toBeCloseTo(10 ** 0.1, 9)
  })

  it('puts a value in the slot whose range holds it (upper edge inclusive)', () => {
    expect(slotOf(0)).toBe(0)
    expect(slotOf(1)).toBe(0)
    expect(slotOf(1.01)).toBe(1)
    expect(slotOf(HIST_BOUNDS_MS[20]!)).toBe(20)
    expect(slotOf(100)).toBe(20)
    expect(slotOf(101)).toBe(21)
    expect(slotOf(1e8)).toBe(80)
    expect(slotOf(1e8 + 1)).toBe(81)
    expect(slotOf(1e12)).toBe(81)
    for (const v of [2, 3, 7, 42, 199, 200, 999, 1000, 1001, 12_345, 3_600_000]) {
      const [lo, hi] = slotRange(slotOf(v))
      expect(v).toBeGreaterThan(lo)
      expect(v).toBeLessThanOrEqual(hi)
    }
  })

  it('ignores negative and non-finite values', () => {
    expect(histogramOf([-1, Number.NaN, Number.POSITIVE_INFINITY]).every((c) => c === 0)).toBe(true)
  })
})

describe('quantile', () => {
  it('is null for an empty histogram', () => {
    expect(quantile(emptyHistogram(), 0.5)).toBeNull()
    expect(quantile([], 0.95)).toBeNull()
  })

  it('interpolates linearly inside the slot holding the rank', () => {
    const h = histogramOf([200, 200, 200, 200])
    const [lo, hi] = slotRange(slotOf(200))
    expect(quantile(h, 0.5)).toBe(Math.round(lo + (hi - lo) * 0.5))
    expect(quantile(h, 1)).toBe(Math.round(hi))
  })

  it('stays within a slot of the true percentile', () => {
    const values = Array.from({ length: 1000 }, (_, i) => 50 + i * 7) // 50 … 7043 ms
    const h = histogramOf(values)
    for (const q of [0.5, 0.95, 0.99]) {
      const truth = values[Math.ceil(q * values.length) - 1]!
      const got = quantile(h, q)!
      expect(Math.abs(got - truth) / truth).toBeLessThan(0.26)
    }
  })

  it('separates the body from the tail', () => {
    const h = histogramOf([...Array(8).fill(200), 5000, 5000])
    const p50 = quantile(h, 0.5)!
    const p95 = quantile(h, 0.95)!
    expect(p50).toBeGreaterThan(slotRange(slotOf(200))[0])
    expect(p50).toBeLessThanOrEqual(slotRange(slotOf(200))[1])
    expect(p95).toBeGreaterThan(slotRange(slotOf(5000))[0])
    expect(p95).toBeLessThanOrEqual(Math.ceil(slotRange(slotOf(5000))[1]))
  })

  it('answers the overflow slot with its lower edge', () => {
    expect(quantile(histogramOf([2e8]), 0.5)).toBe(1e8)
  })

  it('reads summed histograms, including stored nulls and shorter arrays', () => {
    const a = histogramOf([10, 20])
    const b = histogramOf([30, 40])
    const sum = addInto(emptyHistogram(), a)
    addInto(sum, b)
    addInto(sum, [null, null])
    expect(sum.reduce((s, c) => s + c, 0)).toBe(4)
    expect(quantile(sum, 1)).toBe(Math.round(slotRange(slotOf(40))[1]))
  })
})
