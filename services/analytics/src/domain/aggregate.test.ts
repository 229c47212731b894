import { describe, expect, it } from 'vitest'
import { aggregate, uniqueByKey } from './aggregate.js'
import type { Effect } from './event-effects.js'
import { slotOf } from './histogram.js'

const e = (over: Partial<Effect>): Effect => ({
  projectId: 'proj_a',
  key: Math.random().toString(36),
  at: new Date('2026-03-10T13:45:00Z'),
  counter: 'sent',
  amount: 1,
  deliveryMs: null,
  dimensions: [],
  ...over,
})

describe('uniqueByKey', () => {
  it('keeps the first effect of each key', () => {
    const a = e({ key: 'k1', counter: 'sent' })
    const b = e({ key: 'k1', counter: 'delivered' })
    const c = e({ key: 'k2' })
    expect(uniqueByKey([a, b, c])).toEqual([a, c])
  })
})

describe('aggregate', () => {
  it('adds each effect to its hour and its day bucket', () => {
    const { buckets } = aggregate([
      e({}),
      e({ at: new Date('2026-03-10T13:59:59Z') }),
      e({ at: new Date('2026-03-10T14:00:00Z'), counter: 'opened' }),
    ])
    expect(
      buckets.map((b) => [b.granularity, b.start.toISOString(), b.counts.sent, b.counts.opened]),
    ).toEqual([
      ['day', '2026-03-10T00:00:00.000Z', 2, 1],
      ['hour', '2026-03-10T13:00:00.000Z', 2, 0],
      ['hour', '2026-03-10T14:00:00.000Z', 0, 1],
    ])
  })

  it('keeps projects apart and sorts rows by key', () => {
    const { buckets } = aggregate([e({ projectId: 'proj_b' }), e({ projectId: 'proj_a' })])
    expect(buckets.map((b) => `${b.projectId}/${b.granularity}`)).toEqual([
      'proj_a/day',
      'proj_a/hour',
      'proj_b/day',
      'proj_b/hour',
    ])
  })

  it('builds histograms only where something was delivered', () => {
    const { buckets } = aggregate([
      e({ counter: 'delivered', deliveryMs: 250 }),
      e({ counter: 'delivered', deliveryMs: 250 }),
      e({ counter: 'delivered', deliveryMs: 4000 }),
      e({ at: new Date('2026-03-11T00:00:00Z') }),
    ])
    const day10 = buckets.find(
      (b) => b.granularity === 'day' && b.start.toISOString().startsWith('2026-03-10'),
    )!
    expect(day10.counts.delivered).toBe(3)
    expect(day10.hist![slotOf(250)]).toBe(2)
    expect(day10.hist![slotOf(4000)]).toBe(1)
    const day11 = buckets.find(
      (b) => b.granularity === 'day' && b.start.toISOString().startsWith('2026-03-11'),
    )!
    expect(day11.hist).toBeNull()
  })

  it('counts dimensions per project, UTC day, kind and value', () => {
    const tag = { kind: 'tag' as const, value: 'plan:pro' }
    const { dimensions } = aggregate([
      e({ dimensions: [tag] }),
      e({ dimensions: [tag, { kind: 'tag', value: 'kind:welcome' }] }),
      // An email sent to three recipients: its tags count three sends, like `sent`.
      e({ amount: 3, dimensions: [tag] }),
      e({ at: new Date('2026-03-11T01:00:00Z'), dimensions: [tag] }),
      e({ counter: 'bounced', dimensions: [{ kind: 'bounced_domain', value: 'x.io' }] }),
    ])
    expect(dimensions).toEqual([
      { projectId: 'proj_a', day: '2026-03-10', kind: 'bounced_domain', value: 'x.io', count: 1 },
      { projectId: 'proj_a', day: '2026-03-10', kind: 'tag', value: 'kind:welcome', count: 1 },
      { projectId: 'proj_a', day: '2026-03-10', kind: 'tag', value: 'plan:pro', count: 5 },
      { projectId: 'proj_a', day: '2026-03-11', kind: 'tag', value: 'plan:pro', count: 1 },
    ])
  })
})
