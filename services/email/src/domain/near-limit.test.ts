import { describe, expect, it } from 'vitest'
import { NearLimit } from './near-limit.js'

describe('NearLimit', () => {
  it('a project reads first from its first refusal until a read finds room', () => {
    const n = new NearLimit()
    expect(n.has('p')).toBe(false)
    n.observe('p', { refused: false, roomRead: false })
    expect(n.has('p')).toBe(false)
    n.observe('p', { refused: true, roomRead: false })
    expect(n.has('p')).toBe(true)
    // Refused again from the read: stays.
    n.observe('p', { refused: true, roomRead: false })
    expect(n.has('p')).toBe(true)
    // A request with nothing new to admit (an idempotent repeat) tells nothing: stays.
    n.observe('p', { refused: false, roomRead: false })
    expect(n.has('p')).toBe(true)
    n.observe('p', { refused: false, roomRead: true })
    expect(n.has('p')).toBe(false)
  })

  it('keeps projects apart', () => {
    const n = new NearLimit()
    n.observe('a', { refused: true, roomRead: false })
    expect(n.has('a')).toBe(true)
    expect(n.has('b')).toBe(false)
  })
})
