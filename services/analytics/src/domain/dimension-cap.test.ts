import { describe, expect, it } from 'vitest'
import type { DimensionDelta } from './aggregate.js'
import { capDimensions, groupKey, OTHER_VALUE, rowKey, type StoredDimensions } from './dimension-cap.js'

const d = (value: string, count = 1, over: Partial<DimensionDelta> = {}): DimensionDelta => ({
  projectId: 'proj_a',
  day: '2026-03-10',
  kind: 'tag',
  value,
  count,
  ...over,
})
const none: StoredDimensions = { distinct: new Map(), present: new Set() }
const sum = (rows: DimensionDelta[]) => rows.reduce((n, r) => n + r.count, 0)

describe('capDimensions', () => {
  it('changes nothing while a group stays under the cap', () => {
    const rows = [d('a:1'), d('b:1', 3)]
    expect(capDimensions(rows, none, 5)).toEqual(rows)
  })

  it('keeps the most counted new values and pools the rest under the overflow value', () => {
    const rows = [d('order:1'), d('order:2'), d('plan:pro', 5), d('plan:free', 2), d('order:3')]
    const out = capDimensions(rows, none, 3)
    expect(out.map((r) => [r.value, r.count])).toEqual([
      [OTHER_VALUE, 2],
      ['order:1', 1],
      ['plan:free', 2],
      ['plan:pro', 5],
    ])
    expect(sum(out)).toBe(sum(rows))
  })

  it('lets values already stored keep counting, and admits new ones only into the room left', () => {
    const stored: StoredDimensions = {
      distinct: new Map([[groupKey(d('x')), 3]]),
      present: new Set([rowKey(d('plan:pro'))]),
    }
    const out = capDimensions([d('plan:pro', 4), d('order:9'), d('order:8', 2)], stored, 4)
    expect(out.map((r) => [r.value, r.count])).toEqual([
      [OTHER_VALUE, 1],
      ['order:8', 2],
      ['plan:pro', 4],
    ])
    const full = capDimensions([d('order:7')], { ...stored, distinct: new Map([[groupKey(d('x')), 9]]) }, 4)
    expect(full).toEqual([d(OTHER_VALUE)])
  })

  it('caps each project, day and kind on its own and returns rows in primary-key order', () => {
    const rows = [
      d('t:1', 1, { day: '2026-03-11' }),
      d('t:2', 1, { day: '2026-03-11' }),
      d('t:1'),
      d('t:2'),
      d('t:1', 1, { projectId: 'proj_0' }),
      d('gone.example', 1, { kind: 'bounced_domain' }),
    ]
    const out = capDimensions(rows, none, 1)
    expect(out.map((r) => rowKey(r))).toEqual(
      [
        d('t:1', 1, { projectId: 'proj_0' }),
        d('gone.example', 1, { kind: 'bounced_domain' }),
        d(OTHER_VALUE),
        d('t:1'),
        d(OTHER_VALUE, 1, { day: '2026-03-11' }),
        d('t:1', 1, { day: '2026-03-11' }),
      ].map(rowKey),
    )
  })
})
