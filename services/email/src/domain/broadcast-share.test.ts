import { describe, expect, it } from 'vitest'
import { allowance, broadcastRateLimit } from './broadcast-share.js'

const limits = { rateLimit: 300, broadcastRateLimit: 150, dailyLimit: 0, periodSeconds: 60 }

describe('broadcastRateLimit', () => {
  it('is the share of the rate limit, at least one', () => {
    expect(broadcastRateLimit(300, 0.5)).toBe(150)
    expect(broadcastRateLimit(1, 0.5)).toBe(1)
    expect(broadcastRateLimit(300, 1)).toBe(300)
  })
})

describe('allowance', () => {
  it('leaves broadcasts only their share of the rolling window', () => {
    const a = allowance({ previous: 0, current: 100, day: 100 }, 0.5, limits)
    expect(a).toEqual({ rateLeft: 200, dayLeft: null, broadcastLeft: 50, retryAfterMs: 0 })
  })

  it('gives broadcasts nothing once transactional traffic used the share, and says when to ask again', () => {
    const a = allowance({ previous: 0, current: 160, day: 160 }, 0.5, limits)
    expect(a.rateLeft).toBe(140)
    expect(a.broadcastLeft).toBe(0)
    expect(a.retryAfterMs).toBe(6000)
  })

  it('counts the daily limit for broadcasts, and no retry hint when the day is used up', () => {
    const a = allowance({ previous: 0, current: 0, day: 98 }, 0.1, { ...limits, dailyLimit: 100 })
    expect(a.dayLeft).toBe(2)
    expect(a.broadcastLeft).toBe(2)
    const done = allowance({ previous: 0, current: 0, day: 100 }, 0.1, { ...limits, dailyLimit: 100 })
    expect(done).toMatchObject({ dayLeft: 0, broadcastLeft: 0, retryAfterMs: 0 })
  })

  it('no retry hint either once the rate limit itself is used up: the broadcast pauses', () => {
    const full = allowance({ previous: 0, current: 300, day: 300 }, 0.5, limits)
    expect(full).toEqual({ rateLeft: 0, dayLeft: null, broadcastLeft: 0, retryAfterMs: 0 })
  })
})
