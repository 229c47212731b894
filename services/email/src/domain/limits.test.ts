import { describe, expect, it } from 'vitest'
import { admit, counterWindows } from './limits.js'

describe('counterWindows', () => {
  it('names the previous and current rate windows and the UTC day', () => {
    const w = counterWindows(new Date('2026-03-01T10:00:15Z'), 60)
    const index = Math.floor(Date.parse('2026-03-01T10:00:15Z') / 60_000)
    expect(w.current.key).toBe(`rate:60:${index}`)
    expect(w.previous.key).toBe(`rate:60:${index - 1}`)
    expect(w.day.key).toBe('day:2026-03-01')
    expect(w.elapsed).toBeCloseTo(0.25)
    expect(w.current.expiresAt.toISOString()).toBe('2026-03-01T10:02:00.000Z')
    expect(w.day.expiresAt.toISOString()).toBe('2026-03-03T00:00:00.000Z')
  })

  it('uses 10-second windows when the period is 10', () => {
    const w = counterWindows(new Date('2026-03-01T10:00:15Z'), 10)
    expect(w.elapsed).toBeCloseTo(0.5)
  })
})

describe('admit', () => {
  it('admits everything under both limits', () => {
    expect(admit(3, { previous: 0, current: 0, day: 0 }, 0.5, 300, 5000).admitted).toBe(3)
  })

  it('weighs the previous window by how much of it still overlaps, rounding up', () => {
    // 10 in the previous window, 30% into this one: ceil(10 × 0.7) = 7 still count
    const a = admit(10, { previous: 10, current: 1, day: 11 }, 0.3, 10, 0)
    expect(a.admitted).toBe(2)
    expect(a.errorFor(2)).toBe('rate_limited')
  })

  it('is approximate for bursts, within the bounds docs/api.md states', () => {
    // 5 sent at the very end of the previous window: 90 % into this one, 4 more fit (9 in ~54 s).
    expect(admit(10, { previous: 5, current: 0, day: 5 }, 0.9, 5, 0).admitted).toBe(4)
    // 5 sent 5 % into the previous window: 60 s later (10 % into this one) still no room.
    expect(admit(1, { previous: 5, current: 0, day: 5 }, 0.1, 5, 0).admitted).toBe(0)
    // The window after that admits again.
    expect(admit(1, { previous: 0, current: 0, day: 5 }, 0.1, 5, 0).admitted).toBe(1)
  })

  it('checks the rate limit before the daily limit', () => {
    const a = admit(10, { previous: 0, current: 0, day: 97 }, 0, 5, 100)
    expect(a.admitted).toBe(3)
    expect(a.errorFor(3)).toBe('daily_limit_exceeded')
    expect(a.errorFor(5)).toBe('rate_limited')
  })

  it('treats a daily limit of 0 as none', () => {
    expect(admit(50, { previous: 0, current: 0, day: 1_000_000 }, 0, 300, 0).admitted).toBe(50)
  })

  it('admits nothing once a limit is used up', () => {
    expect(admit(1, { previous: 0, current: 300, day: 300 }, 0.9, 300, 0).admitted).toBe(0)
  })
})
