import { describe, expect, it } from 'vitest'
import { GroupFiller, groupsWithin } from './batch-groups.js'

const item = (n: number, bytes: number) => ({ n, pad: 'x'.repeat(bytes) })
const jsonBytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8')

describe('groupsWithin', () => {
  it('keeps a chunk whole when it fits', () => {
    const items = [item(1, 10), item(2, 10)]
    expect(groupsWithin(items, 1_000)).toEqual([items])
    expect(groupsWithin([], 1_000)).toEqual([])
  })

  it('splits in order so that each group serialises within the limit', () => {
    const items = Array.from({ length: 25 }, (_, i) => item(i, 90 + (i % 7) * 13))
    const groups = groupsWithin(items, 600)
    expect(groups.length).toBeGreaterThan(1)
    expect(groups.flat()).toEqual(items)
    for (const g of groups) expect(jsonBytes(g)).toBeLessThanOrEqual(600)
  })

  it('counts UTF-8 bytes, not characters', () => {
    const items = [{ s: 'é'.repeat(100) }, { s: 'é'.repeat(100) }]
    expect(groupsWithin(items, 300)).toEqual([[items[0]], [items[1]]])
  })

  it('sends an item larger than the limit on its own', () => {
    const big = item(2, 5_000)
    expect(groupsWithin([item(1, 10), big, item(3, 10)], 1_000)).toEqual([
      [item(1, 10)],
      [big],
      [item(3, 10)],
    ])
  })
})

describe('GroupFiller', () => {
  it('hands over each group as the item after it arrives, so only one group is held at a time', () => {
    const filler = new GroupFiller<ReturnType<typeof item>>(600)
    const items = Array.from({ length: 10 }, (_, i) => item(i, 150))
    const closed: Array<ReturnType<typeof item>[]> = []
    for (const it of items) {
      const full = filler.add(it)
      if (full) closed.push(full)
    }
    const last = filler.take()
    expect([...closed, last].flat()).toEqual(items)
    for (const g of [...closed, last]) expect(jsonBytes(g)).toBeLessThanOrEqual(600)
    expect(closed.length).toBeGreaterThan(1)
    expect(filler.take()).toEqual([])
  })
})
