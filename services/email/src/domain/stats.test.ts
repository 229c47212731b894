import { describe, expect, it } from 'vitest'
import { buildStats, statsWindows } from './stats.js'

describe('admin stats', () => {
  it('starts today at 00:00 UTC and the other windows 7 and 30 days back', () => {
    const w = statsWindows(new Date('2026-03-10T15:30:00Z'))
    expect(w.today.toISOString()).toBe('2026-03-10T00:00:00.000Z')
    expect(w.last7d.toISOString()).toBe('2026-03-03T15:30:00.000Z')
    expect(w.last30d.toISOString()).toBe('2026-02-08T15:30:00.000Z')
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
