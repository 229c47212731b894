import { describe, expect, it } from 'vitest'
import { Slots } from './slots.js'

const deferred = () => {
  let resolve!: () => void
  const promise = new Promise<void>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

describe('Slots', () => {
  it('runs at most `size` at once and serves waiters in arrival order', async () => {
    const slots = new Slots(2)
    const gates = [deferred(), deferred(), deferred(), deferred()]
    const started: number[] = []
    const runs = gates.map((g, i) =>
      slots.run(async () => {
        started.push(i)
        await g.promise
        return i
      }),
    )
    await new Promise((r) => setImmediate(r))
    expect(started).toEqual([0, 1])
    expect(slots.inUse).toBe(2)
    gates[1]!.resolve()
    await new Promise((r) => setImmediate(r))
    expect(started).toEqual([0, 1, 2])
    gates[0]!.resolve()
    gates[2]!.resolve()
    gates[3]!.resolve()
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3])
    expect(slots.inUse).toBe(0)
  })

  it('frees the slot when the work throws', async () => {
    const slots = new Slots(1)
    await expect(slots.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
    expect(await slots.run(async () => 'next')).toBe('next')
  })

  it('close() turns away the waiters and later callers; running work finishes', async () => {
    const slots = new Slots(1)
    const gate = deferred()
    const running = slots.run(async () => {
      await gate.promise
      return 'done'
    })
    let ran = false
    const waiting = slots.run(async () => {
      ran = true
      return 'late'
    })
    slots.close()
    expect(await waiting).toBeNull()
    expect(await slots.run(async () => 'after')).toBeNull()
    gate.resolve()
    expect(await running).toBe('done')
    expect(ran).toBe(false)
  })
})
