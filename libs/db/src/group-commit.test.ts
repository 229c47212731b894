import { describe, expect, it } from 'vitest'
import { GroupCommit } from './group-commit.js'

/** A writer whose writes finish only when the test says so, recording what each write held. */
function gatedWriter(fail: (req: number) => boolean = () => false) {
  const writes: number[][] = []
  const gates: Array<() => void> = []
  const writeMany = async (reqs: number[]) => {
    writes.push(reqs)
    await new Promise<void>((r) => gates.push(r))
    if (reqs.some(fail)) throw new Error(`bad request in ${reqs.join(',')}`)
    return reqs.map((r) => r * 10)
  }
  const openAll = async () => {
    while (gates.length) {
      gates.splice(0).forEach((g) => {
        g()
      })
      await new Promise((r) => setImmediate(r))
    }
  }
  return { writes, writeMany, openAll }
}

describe('GroupCommit', () => {
  it('writes at once while a slot is free, and combines what arrives while every slot is busy', async () => {
    const w = gatedWriter()
    const gc = new GroupCommit(w.writeMany, { slots: 1, maxItems: 100 })
    const results = [1, 2, 3, 4].map((n) => gc.submit(n))
    expect(w.writes).toEqual([[1]])
    expect(gc.waiting).toBe(3)
    await w.openAll()
    expect(await Promise.all(results)).toEqual([10, 20, 30, 40])
    expect(w.writes).toEqual([[1], [2, 3, 4]])
  })

  it('opens a second slot only once extraSlotAt items wait', async () => {
    const w = gatedWriter()
    const gc = new GroupCommit(w.writeMany, { slots: 2, maxItems: 100, extraSlotAt: 5, sizeOf: (n) => n })
    const results = [1, 2, 2].map((n) => gc.submit(n))
    // One write in flight; 4 items wait, fewer than 5: they wait for the first slot.
    expect(w.writes).toEqual([[1]])
    results.push(gc.submit(3))
    // 7 items wait: the second slot takes them all.
    expect(w.writes).toEqual([[1], [2, 2, 3]])
    expect(gc.waiting).toBe(0)
    await w.openAll()
    expect(await Promise.all(results)).toEqual([10, 20, 20, 30])
  })

  it('caps a combined write at maxItems, counting each request by its size', async () => {
    const w = gatedWriter()
    const gc = new GroupCommit(w.writeMany, { slots: 1, maxItems: 5, sizeOf: (n) => n })
    const results = [1, 2, 2, 4, 9].map((n) => gc.submit(n))
    await w.openAll()
    await Promise.all(results)
    // 9 is larger than maxItems and still goes, alone.
    expect(w.writes).toEqual([[1], [2, 2], [4], [9]])
  })

  it('retries a failed combined write request by request, so only the bad request fails', async () => {
    const w = gatedWriter((n) => n === 3)
    const gc = new GroupCommit(w.writeMany, { slots: 1, maxItems: 100 })
    const results = [1, 2, 3, 4].map((n) => gc.submit(n).catch((e: Error) => e.message))
    await w.openAll()
    expect(await Promise.all(results)).toEqual([10, 20, 'bad request in 3', 40])
  })
})
