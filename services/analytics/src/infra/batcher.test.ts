import { describe, expect, it } from 'vitest'
import { Batcher } from './batcher.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('Batcher', () => {
  it('flushes a full batch at once', async () => {
    const batches: number[][] = []
    const b = new Batcher<number>({
      maxSize: 3,
      maxWaitMs: 10_000,
      flush: async (xs) => void batches.push(xs),
    })
    await Promise.all([1, 2, 3].map((x) => b.add(x)))
    expect(batches).toEqual([[1, 2, 3]])
  })

  it('flushes a partial batch after maxWaitMs', async () => {
    const batches: number[][] = []
    const b = new Batcher<number>({ maxSize: 100, maxWaitMs: 20, flush: async (xs) => void batches.push(xs) })
    const t0 = Date.now()
    await Promise.all([b.add(1), b.add(2)])
    expect(Date.now() - t0).toBeGreaterThanOrEqual(15)
    expect(batches).toEqual([[1, 2]])
  })

  it('writes one batch at a time; what arrives meanwhile is the next batch', async () => {
    const batches: number[][] = []
    let active = 0
    let maxActive = 0
    const b = new Batcher<number>({
      maxSize: 2,
      maxWaitMs: 5,
      flush: async (xs) => {
        active++
        maxActive = Math.max(maxActive, active)
        await sleep(20)
        batches.push(xs)
        active--
      },
    })
    const all = [1, 2, 3, 4, 5].map((x) => b.add(x))
    await Promise.all(all)
    expect(maxActive).toBe(1)
    expect(batches).toEqual([[1, 2], [3, 4], [5]])
  })

  it('rejects every item of a failed batch and keeps going', async () => {
    let calls = 0
    const b = new Batcher<number>({
      maxSize: 2,
      maxWaitMs: 5,
      flush: async () => {
        calls++
        if (calls === 1) throw new Error('db down')
      },
    })
    const r = await Promise.allSettled([b.add(1), b.add(2), b.add(3)])
    expect(r.map((x) => x.status)).toEqual(['rejected', 'rejected', 'fulfilled'])
  })

  it('drain flushes what is waiting', async () => {
    const batches: number[][] = []
    const b = new Batcher<number>({
      maxSize: 100,
      maxWaitMs: 60_000,
      flush: async (xs) => void batches.push(xs),
    })
    const p = b.add(7)
    await b.drain()
    await p
    expect(batches).toEqual([[7]])
    expect(b.size).toBe(0)
  })
})
