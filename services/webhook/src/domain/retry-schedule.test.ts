import { WEBHOOK_RETRY_SCHEDULE_SECONDS } from '@mailer/contracts'
import { describe, expect, it } from 'vitest'
import { maxAttempts, nextStep } from './retry-schedule.js'

describe('nextStep', () => {
  const s = WEBHOOK_RETRY_SCHEDULE_SECONDS
  it('waits 30 s, 2 min, 10 min, 30 min, 1 h, 3 h, 6 h, 12 h, then fails', () => {
    const waits = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => nextStep(n, 'failure', s))
    expect(waits).toEqual(
      [30, 120, 600, 1800, 3600, 10_800, 21_600, 43_200].map((w) => ({
        status: 'pending',
        delayMs: w * 1000,
      })),
    )
    expect(nextStep(9, 'timeout', s)).toEqual({ status: 'failed' })
    expect(maxAttempts(s)).toBe(9)
  })
  it('ends at once on success, and on a blocked (private) address', () => {
    expect(nextStep(1, 'success', s)).toEqual({ status: 'success' })
    expect(nextStep(9, 'success', s)).toEqual({ status: 'success' })
    expect(nextStep(1, 'blocked', s)).toEqual({ status: 'failed' })
  })
  it('follows a configured short schedule', () => {
    expect(nextStep(1, 'failure', [1, 1, 2])).toEqual({ status: 'pending', delayMs: 1000 })
    expect(nextStep(3, 'failure', [1, 1, 2])).toEqual({ status: 'pending', delayMs: 2000 })
    expect(nextStep(4, 'failure', [1, 1, 2])).toEqual({ status: 'failed' })
  })
})
