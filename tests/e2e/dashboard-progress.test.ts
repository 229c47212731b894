import { describe, expect, it } from 'vitest'
import { progressOf, progressText } from '../../services/gateway/dashboard/src/lib/progress.js'

// The words of a broadcast's progress bar (the broadcast page and the list), from its counts. A
// test key's broadcast makes `test` emails, which never become delivered: a finished one of 500
// read "0 sent, 500 in progress".
const text = (counts: Record<string, number>, target?: number) => progressText(progressOf(counts), target)

describe('broadcast progress', () => {
  it("counts a test key's emails as done, and says they are not delivered", () => {
    expect(text({ test: 500 }, 500)).toBe(
      '500 sent (test emails, not delivered), 0 in progress, 0 failed or skipped of 500 contacts',
    )
    expect(progressOf({ test: 500 })).toMatchObject({ done: 500, waiting: 0 })
  })

  it('counts live emails by where they are', () => {
    expect(text({ delivered: 90, sent: 5, queued: 3, bounced: 1, rejected: 1 }, 120)).toBe(
      '95 sent, 3 in progress, 2 failed or skipped of 120 contacts',
    )
    expect(text({})).toBe('0 sent, 0 in progress, 0 failed or skipped')
  })
})
