import { describe, expect, it } from 'vitest'
import { nextCountInMs } from './count-schedule.js'

const s = { refreshMs: 5_000, recentMs: 3_600_000, maxMs: 86_400_000 }
const now = new Date('2026-12-14T12:00:00Z')
const ago = (ms: number) => new Date(now.getTime() - ms)
const HOUR = 3_600_000

describe('nextCountInMs', () => {
  it('recounts a sending or paused broadcast every refresh interval', () => {
    expect(nextCountInMs({ status: 'sending', scheduledAt: null, finishedAt: null }, now, s)).toBe(5_000)
    expect(nextCountInMs({ status: 'paused', scheduledAt: null, finishedAt: null }, now, s)).toBe(5_000)
  })

  it('keeps a just finished broadcast on the refresh interval for the recent window', () => {
    expect(nextCountInMs({ status: 'sent', scheduledAt: null, finishedAt: ago(10 * 60_000) }, now, s)).toBe(
      5_000,
    )
    expect(nextCountInMs({ status: 'canceled', scheduledAt: null, finishedAt: ago(HOUR - 1) }, now, s)).toBe(
      5_000,
    )
  })

  it('then recounts at a tenth of its age, at most once a day', () => {
    expect(nextCountInMs({ status: 'sent', scheduledAt: null, finishedAt: ago(2 * HOUR) }, now, s)).toBe(
      12 * 60_000,
    )
    expect(
      nextCountInMs({ status: 'sent', scheduledAt: null, finishedAt: ago(30 * 24 * HOUR) }, now, s),
    ).toBe(86_400_000)
  })

  it('waits for a scheduled broadcast to start, within the bounds', () => {
    const at = (ms: number) => new Date(now.getTime() + ms)
    expect(nextCountInMs({ status: 'scheduled', scheduledAt: at(HOUR), finishedAt: null }, now, s)).toBe(HOUR)
    expect(nextCountInMs({ status: 'scheduled', scheduledAt: at(-1), finishedAt: null }, now, s)).toBe(5_000)
    expect(
      nextCountInMs({ status: 'scheduled', scheduledAt: at(20 * 24 * HOUR), finishedAt: null }, now, s),
    ).toBe(86_400_000)
  })

  it('never goes below the refresh interval, whatever the maximum', () => {
    const tight = { refreshMs: 60_000, recentMs: 0, maxMs: 1_000 }
    expect(nextCountInMs({ status: 'sent', scheduledAt: null, finishedAt: ago(HOUR) }, now, tight)).toBe(
      60_000,
    )
    expect(nextCountInMs({ status: null, scheduledAt: null, finishedAt: null }, now, tight)).toBe(60_000)
  })
})
