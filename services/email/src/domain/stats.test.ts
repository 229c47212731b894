import { describe, expect, it } from 'vitest'
import { buildStats, olderHours, ROLLUP_HOURS, recentHours, statsWindows } from './stats.js'

describe('admin stats', () => {
  it('starts today at 00:00 UTC and the other windows at the hour 7 and 30 days back', () => {
    const w = statsWindows(new Date('2026-03-10T15:30:00Z'))
    expect(w.today.toISOString()).toBe('2026-03-10T00:00:00.000Z')
    expect(w.last7d.toISOString()).toBe('2026-03-03T15:00:00.000Z')
    expect(w.last30d.toISOString()).toBe('2026-02-08T15:00:00.000Z')
  })

  it('refreshes the current and previous hour, and the older ones in runs, newest first', () => {
    const now = new Date('2026-03-10T15:30:00Z')
    expect(recentHours(now)).toEqual({ from: new Date('2026-03-10T14:00:00Z'), hours: 2 })
    const older = olderHours(now, 6)
    expect(older[0]).toEqual({ from: new Date('2026-03-10T08:00:00Z'), hours: 6 })
    // Runs that meet, from the recent hours back to ROLLUP_HOURS, past the 30-day window's start.
    for (let i = 1; i < older.length; i++)
      expect(older[i]!.from.getTime() + older[i]!.hours * 3_600_000).toBe(older[i - 1]!.from.getTime())
    expect(older.reduce((n, r) => n + r.hours, 2)).toBe(ROLLUP_HOURS)
    expect(older.at(-1)!.from.getTime()).toBeLessThan(statsWindows(now).last30d.getTime())
    expect(olderHours(now, 1)).toHaveLength(ROLLUP_HOURS - 2)
  })

  it('gives every project its status maps, empty when it sent nothing', () => {
    const projects = [
      { id: 'proj_a', slug: 'a', name: 'A' },
      { id: 'proj_b', slug: 'b', name: 'B' },
    ]
    const data = buildStats(projects, [
      { projectId: 'proj_a', status: 'queued', today: 2, last7d: 3, last30d: 3 },
      { projectId: 'proj_a', status: 'delivered', today: 0, last7d: 0, last30d: 4 },
      { projectId: 'proj_gone', status: 'queued', today: 1, last7d: 1, last30d: 1 },
    ])
    expect(data).toEqual([
      {
        projectId: 'proj_a',
        slug: 'a',
        name: 'A',
        today: { queued: 2 },
        last7d: { queued: 3 },
        last30d: { queued: 3, delivered: 4 },
      },
      { projectId: 'proj_b', slug: 'b', name: 'B', today: {}, last7d: {}, last30d: {} },
    ])
  })
})
