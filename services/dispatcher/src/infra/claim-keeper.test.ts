import type { PgPool } from '@mailer/db'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ClaimKeeper } from './claim-keeper.js'

// The default ack wait: refreshed every 10 s, stale after 30 s, final dot only with 10 s left.
const OPTS = { everyMs: 10_000, staleAfterMs: 30_000, fenceMs: 10_000 }

/** A pool whose refreshes answer as `answer` says, each after `latencyMs`. */
function fakePool(answer: () => 'ok' | 'gone' | 'error', latencyMs = 0) {
  const calls: number[] = []
  const pool = {
    query: async () => {
      calls.push(performance.now())
      if (latencyMs) await new Promise((resolve) => setTimeout(resolve, latencyMs))
      const a = answer()
      if (a === 'error') throw new Error('connection refused')
      return { rows: a === 'ok' ? [{ claimedAt: new Date() }] : [] }
    },
  }
  return { pool: pool as unknown as PgPool, calls }
}

function keeper(pool: PgPool, askedAt = performance.now()) {
  const events = { lost: 0, errors: 0 }
  const email = { id: 'email_1', claimedAt: new Date(0) }
  const k = new ClaimKeeper(pool, email, {
    ...OPTS,
    askedAt,
    onLost: () => events.lost++,
    onError: () => events.errors++,
  })
  return { k, email, events }
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})

describe('ClaimKeeper', () => {
  it('holds a claim whose refreshes succeed, however long the send, and moves its token', async () => {
    const { pool, calls } = fakePool(() => 'ok')
    const { k, email } = keeper(pool)
    for (let i = 0; i < 12; i++) {
      await vi.advanceTimersByTimeAsync(5_000)
      expect(k.holds()).toBe(true)
    }
    expect(calls).toHaveLength(6)
    expect(email.claimedAt.getTime()).toBeGreaterThan(0)
    await k.stop()
  })

  it('stops holding a claim not refreshed for two thirds of the ack wait, trying every second meanwhile', async () => {
    const { pool, calls } = fakePool(() => 'error')
    const start = performance.now()
    const { k, events } = keeper(pool, start)
    await vi.advanceTimersByTimeAsync(19_999)
    // Refreshes at 10 s, then every second.
    expect(calls.map((t) => t - start)).toEqual([
      10_000, 11_000, 12_000, 13_000, 14_000, 15_000, 16_000, 17_000, 18_000, 19_000,
    ])
    expect(events.errors).toBe(10)
    expect(k.holds()).toBe(true)
    // From 20 s the claim could be stale within 10 s: no final dot any more.
    await vi.advanceTimersByTimeAsync(1)
    expect(k.holds()).toBe(false)
    await k.stop()
  })

  it('holds again once a refresh gets through, counting from when that refresh was asked', async () => {
    let answer: 'ok' | 'error' = 'error'
    const { pool } = fakePool(() => answer, 3_000)
    const start = performance.now()
    const { k } = keeper(pool, start)
    // Refresh asked at 10 s fails at 13 s; asked at 14 s fails at 17 s; asked at 18 s succeeds at 21 s.
    await vi.advanceTimersByTimeAsync(17_500)
    answer = 'ok'
    await vi.advanceTimersByTimeAsync(2_500)
    expect(k.holds()).toBe(false)
    await vi.advanceTimersByTimeAsync(1_000)
    // Confirmed as of 18 s: ours until 48 s, so a dot may go out until 38 s.
    expect(k.holds()).toBe(true)
    answer = 'error'
    await vi.advanceTimersByTimeAsync(38_000 - 21_000 - 1)
    expect(k.holds()).toBe(true)
    await vi.advanceTimersByTimeAsync(1)
    expect(k.holds()).toBe(false)
    await k.stop()
  })

  it('lets go of a claim a refresh found moved: no dot, no more refreshes', async () => {
    const { pool, calls } = fakePool(() => 'gone')
    const { k, events } = keeper(pool)
    await vi.advanceTimersByTimeAsync(10_000)
    expect(k.holds()).toBe(false)
    expect(events.lost).toBe(1)
    await vi.advanceTimersByTimeAsync(60_000)
    expect(calls).toHaveLength(1)
    await k.stop()
  })

  it("counts a claim's life from when it was asked for, not from when it was granted", async () => {
    const { pool } = fakePool(() => 'error')
    // The claim's statement waited 15 s for its group (or the database) before it ran.
    const { k } = keeper(pool, performance.now() - 15_000)
    expect(k.holds()).toBe(true)
    await vi.advanceTimersByTimeAsync(5_000)
    expect(k.holds()).toBe(false)
    await k.stop()
  })

  it('runs no refresh under the final write, and refreshes between failed writes until one lands', async () => {
    let answer: 'ok' | 'error' = 'ok'
    const { pool, calls } = fakePool(() => answer)
    const start = performance.now()
    const { k, email } = keeper(pool, start)
    // A write in flight from 9 s to 14 s: the refresh due at 10 s waits for it, then runs at once.
    await vi.advanceTimersByTimeAsync(9_000)
    const failing = k.finish(async () => {
      await new Promise((resolve) => setTimeout(resolve, 5_000))
      throw new Error('statement timeout')
    })
    const settled = failing.catch((err: Error) => err.message)
    await vi.advanceTimersByTimeAsync(4_999)
    expect(calls).toHaveLength(0)
    await vi.advanceTimersByTimeAsync(1)
    expect(await settled).toBe('statement timeout')
    expect(calls.map((t) => t - start)).toEqual([14_000])
    // The next try reads the token that refresh moved; once it lands the keeper stops for good.
    const tokens: Date[] = []
    expect(await k.finish(async () => tokens.push(email.claimedAt))).toBe(1)
    expect(tokens[0]!.getTime()).toBeGreaterThan(0)
    answer = 'error'
    await vi.advanceTimersByTimeAsync(60_000)
    expect(calls).toHaveLength(1)
    expect(k.isLost()).toBe(false)
    await k.stop()
  })

  it('tells the writer a claim a refresh found moved is lost', async () => {
    const { pool } = fakePool(() => 'gone')
    const { k } = keeper(pool)
    await expect(k.finish(async () => Promise.reject(new Error('down')))).rejects.toThrow('down')
    await vi.advanceTimersByTimeAsync(10_000)
    expect(k.isLost()).toBe(true)
    await k.stop()
  })
})
