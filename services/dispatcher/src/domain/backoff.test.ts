import { describe, expect, it } from 'vitest'
import { backoffSeconds, retriesLeft } from './backoff.js'

const policy = { baseSeconds: 15, maxSeconds: 3600, maxRetries: 8 }

describe('backoffSeconds', () => {
  it('doubles from 15 s and stops at one hour (without jitter at its top)', () => {
    const top = () => 1
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 20].map((n) => backoffSeconds(n, policy, top))).toEqual([
      15, 30, 60, 120, 240, 480, 960, 1920, 3600, 3600,
    ])
  })

  it('jitters down to 80 % of the schedule, never above it', () => {
    expect(backoffSeconds(1, policy, () => 0)).toBeCloseTo(12)
    expect(backoffSeconds(3, policy, () => 0.5)).toBeCloseTo(54)
    for (let i = 0; i < 200; i++) {
      const s = backoffSeconds(4, policy)
      expect(s).toBeGreaterThanOrEqual(96)
      expect(s).toBeLessThanOrEqual(120)
    }
  })

  it('never overflows for absurd retry numbers', () => {
    expect(backoffSeconds(10_000, policy, () => 1)).toBe(3600)
  })
})

describe('retriesLeft', () => {
  it('allows 8 retries after the first attempt: attempts 1-8 may retry, the 9th may not', () => {
    expect(retriesLeft(1, policy)).toBe(true)
    expect(retriesLeft(8, policy)).toBe(true)
    expect(retriesLeft(9, policy)).toBe(false)
    expect(retriesLeft(1, { maxRetries: 0 })).toBe(false)
  })
})
