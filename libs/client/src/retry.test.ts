import { describe, expect, it } from 'vitest'
import { MailerApiError } from './errors.js'
import { parseRetryAfter, retryDelayMs } from './retry.js'

const err = (code: string, status: number, retryAfter?: number) =>
  new MailerApiError({
    type: status === 429 ? 'rate_limit_error' : 'internal_error',
    code,
    message: code,
    status,
    retryAfter,
  })

describe('retryDelayMs (interface.md part 8)', () => {
  const ctx = { retriesDone: 0, maxRetries: 2, idempotent: true }

  it('waits Retry-After seconds on rate_limited, up to maxRetries times', () => {
    expect(retryDelayMs(err('rate_limited', 429, 60), ctx)).toBe(60_000)
    expect(retryDelayMs(err('rate_limited', 429, 3), { ...ctx, retriesDone: 1 })).toBe(3_000)
    expect(retryDelayMs(err('rate_limited', 429, 3), { ...ctx, retriesDone: 2 })).toBeNull()
    expect(retryDelayMs(err('rate_limited', 429, 3), { ...ctx, maxRetries: 0 })).toBeNull()
    expect(retryDelayMs(err('rate_limited', 429), ctx)).toBe(60_000)
  })

  it('gives up at once when Retry-After is over 60 seconds', () => {
    expect(retryDelayMs(err('rate_limited', 429, 61), ctx)).toBeNull()
  })

  it('never retries daily_limit_exceeded or other errors', () => {
    expect(retryDelayMs(err('daily_limit_exceeded', 429, 1), ctx)).toBeNull()
    expect(retryDelayMs(err('invalid_body', 400), ctx)).toBeNull()
    expect(retryDelayMs(err('internal', 500), ctx)).toBeNull()
  })

  it('retries service_unavailable only when the call is safe to repeat', () => {
    expect(retryDelayMs(err('service_unavailable', 503, 1), ctx)).toBe(1_000)
    expect(retryDelayMs(err('service_unavailable', 503), ctx)).toBe(1_000)
    expect(retryDelayMs(err('service_unavailable', 503, 1), { ...ctx, idempotent: false })).toBeNull()
  })
})

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP dates', () => {
    expect(parseRetryAfter('60')).toBe(60)
    expect(parseRetryAfter(' 5 ')).toBe(5)
    expect(parseRetryAfter(null)).toBeUndefined()
    expect(parseRetryAfter('soon')).toBeUndefined()
    const now = Date.parse('2026-01-01T00:00:00Z')
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30)
    expect(parseRetryAfter('Thursday, 01-Jan-26 00:00:30 GMT', now)).toBe(30)
    expect(parseRetryAfter('Thu Jan  1 00:00:30 2026', now)).toBe(30)
  })

  it('rounds a fraction up, takes the longest of joined repeats, and reads nothing else as a date', () => {
    expect(parseRetryAfter('1.5')).toBe(2)
    expect(parseRetryAfter('61.5')).toBe(62)
    expect(parseRetryAfter('5, 30')).toBe(30)
    for (const v of ['-1', '+61', '1e3', '2026-01-01', '', ' '])
      expect(parseRetryAfter(v), JSON.stringify(v)).toBeUndefined()
  })
})
