import { describe, expect, it } from 'vitest'
import { mapInTurn } from './in-turn.js'

describe('mapInTurn', () => {
  it('maps in order, one item at a time', async () => {
    let running = 0
    const out = await mapInTurn([1, 2, 3], async (n) => {
      expect(++running).toBe(1)
      await Promise.resolve()
      running--
      return n * 2
    })
    expect(out).toEqual([2, 4, 6])
  })

  it('lets waiting work run between items once it has held the event loop for its slice', async () => {
    const seen: string[] = []
    setImmediate(() => seen.push('other request'))
    await mapInTurn(
      [1, 2, 3],
      async (n) => {
        seen.push(`item ${n}`)
      },
      0,
    )
    expect(seen).toEqual(['item 1', 'other request', 'item 2', 'item 3'])
  })
})
