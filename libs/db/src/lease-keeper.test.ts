import { afterEach, describe, expect, it, vi } from 'vitest'
import { LeaseKeeper } from './lease-keeper.js'

interface Row {
  id: string
  lease: string
}

/** A renewal the test answers: each call records the rows and tokens it was given. */
function gatedRenew() {
  const calls: Array<Array<[string, string]>> = []
  let open: ((tokens: Array<string | null>) => void) | undefined
  const renew = (rows: Row[]) => {
    calls.push(rows.map((r) => [r.id, r.lease]))
    return new Promise<Array<string | null>>((resolve) => {
      open = resolve
    })
  }
  const answer = async (tokens: Array<string | null>) => {
    open!(tokens)
    open = undefined
    await new Promise((r) => setImmediate(r))
  }
  return { calls, renew, answer, pending: () => open !== undefined }
}

const until = async (ok: () => boolean) => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 5))
  expect(ok()).toBe(true)
}

let keeper: LeaseKeeper<Row> | undefined
afterEach(() => keeper?.halt())

describe('LeaseKeeper', () => {
  it('renews every held row in one call, fenced by its token, and moves the token forward', async () => {
    const g = gatedRenew()
    keeper = new LeaseKeeper<Row>({ leaseMs: 1000, everyMs: 20, renew: g.renew, onError: () => undefined })
    const a = { id: 'a', lease: 't1' }
    const b = { id: 'b', lease: 't1' }
    keeper.hold(a, performance.now() - 900)
    keeper.hold(b, performance.now() - 900)
    expect(keeper.leftMs(a)).toBeLessThanOrEqual(100)
    keeper.start()
    await until(g.pending)
    expect(g.calls).toEqual([
      [
        ['a', 't1'],
        ['b', 't1'],
      ],
    ])
    await g.answer(['t2', 't2'])
    expect([a.lease, b.lease]).toEqual(['t2', 't2'])
    expect(keeper.leftMs(a)).toBeGreaterThan(900)
  })

  it('a release waits for the renewal in progress, whose token the row then carries', async () => {
    const g = gatedRenew()
    keeper = new LeaseKeeper<Row>({ leaseMs: 1000, everyMs: 20, renew: g.renew, onError: () => undefined })
    const a = { id: 'a', lease: 't1' }
    keeper.hold(a, performance.now())
    keeper.start()
    await until(g.pending)
    let released = false
    const done = keeper.release(a).then(() => {
      released = true
    })
    await new Promise((r) => setTimeout(r, 30))
    expect(released).toBe(false)
    await g.answer(['t2'])
    await done
    expect(a.lease).toBe('t2')
    expect(keeper.holds(a)).toBe(false)
    // Not renewed again: the holder writes with t2 undisturbed.
    await new Promise((r) => setTimeout(r, 60))
    expect(g.calls).toHaveLength(1)
  })

  it('a row whose lease is gone is no longer held, and its holder is told', async () => {
    const g = gatedRenew()
    const lost: string[] = []
    keeper = new LeaseKeeper<Row>({
      leaseMs: 1000,
      everyMs: 20,
      renew: g.renew,
      onError: () => undefined,
      onLost: (r) => lost.push(r.id),
    })
    const a = { id: 'a', lease: 't1' }
    const b = { id: 'b', lease: 't1' }
    keeper.hold(a, performance.now())
    keeper.hold(b, performance.now())
    keeper.start()
    await until(g.pending)
    await g.answer([null, 't2'])
    expect(lost).toEqual(['a'])
    expect([keeper.holds(a), keeper.holds(b)]).toEqual([false, true])
    expect(a.lease).toBe('t1')
    expect(keeper.leftMs(a)).toBe(Number.NEGATIVE_INFINITY)
  })

  it('tries a failed renewal again within a second, not a whole interval later', async () => {
    let calls = 0
    const errors: unknown[] = []
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] })
    try {
      keeper = new LeaseKeeper<Row>({
        leaseMs: 60_000,
        everyMs: 20_000,
        renew: async (rows) => {
          calls++
          if (calls === 1) throw new Error('database away')
          return rows.map(() => 't2')
        },
        onError: (err) => errors.push(err),
      })
      const a = { id: 'a', lease: 't1' }
      keeper.hold(a, performance.now())
      keeper.start()
      await vi.advanceTimersByTimeAsync(20_000)
      expect([calls, errors.length]).toEqual([1, 1])
      await vi.advanceTimersByTimeAsync(1_000)
      expect([calls, a.lease]).toEqual([2, 't2'])
      expect(keeper.leftMs(a)).toBe(60_000)
    } finally {
      keeper?.halt()
      vi.useRealTimers()
    }
  })
})
