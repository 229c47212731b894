import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { poll } from '../../services/gateway/dashboard/src/lib/poll.js'

// The dashboard's polling (useResource: the projects' stats every 10 s, an email's timeline, a
// broadcast's progress): a slow answer must not have the next polls pile up behind it. Fake timers.
beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

/** A tick whose calls stay in flight until `answer()`. */
function slowTick() {
  const waiting: Array<() => void> = []
  const tick = vi.fn(() => new Promise<void>((r) => waiting.push(r)))
  return { tick, answer: () => waiting.shift()?.() }
}

describe('dashboard polling', () => {
  it('starts no poll while the previous one is still running', async () => {
    const { tick, answer } = slowTick()
    const stop = poll(10_000, tick, () => true)
    await vi.advanceTimersByTimeAsync(10_000)
    expect(tick).toHaveBeenCalledTimes(1)
    // The server takes a minute: five more intervals pass, no request is added.
    await vi.advanceTimersByTimeAsync(50_000)
    expect(tick).toHaveBeenCalledTimes(1)
    answer()
    await vi.advanceTimersByTimeAsync(10_000)
    expect(tick).toHaveBeenCalledTimes(2)
    stop()
  })

  it('polls again after a failed poll, and not while the tab is hidden or once stopped', async () => {
    let visible = false
    const tick = vi.fn(() => Promise.reject(new Error('503')))
    const stop = poll(1_000, tick, () => visible)
    await vi.advanceTimersByTimeAsync(5_000)
    expect(tick).not.toHaveBeenCalled()
    visible = true
    await vi.advanceTimersByTimeAsync(3_000)
    expect(tick).toHaveBeenCalledTimes(3)
    stop()
    await vi.advanceTimersByTimeAsync(5_000)
    expect(tick).toHaveBeenCalledTimes(3)
  })
})
