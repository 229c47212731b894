import { describe, expect, it } from 'vitest'
import { checkPreviewReply, fittingCount, REPLY_ENVELOPE_BYTES } from './reply-size.js'

describe('fittingCount', () => {
  it('keeps the items whose JSON fits together, and always the first', () => {
    const items = ['a'.repeat(100), 'b'.repeat(100), 'c'.repeat(100)] // 102 bytes each as JSON
    expect(fittingCount(items, 1000)).toBe(3)
    expect(fittingCount(items, 2 * 103)).toBe(2)
    expect(fittingCount(items, 2 * 103 - 1)).toBe(1)
    expect(fittingCount(items, 10)).toBe(1)
    expect(fittingCount([], 10)).toBe(0)
  })
})

describe('checkPreviewReply', () => {
  it('refuses a preview over one reply with payload_too_large, param the part that crossed it', () => {
    const max = 4096
    const room = max - REPLY_ENVELOPE_BYTES
    const fits = { subject: 's', html: 'h'.repeat(room - 20), text: null }
    expect(() => checkPreviewReply(fits, max)).not.toThrow()
    // JSON escaping counts: each quote is two bytes on the bus.
    expect(() => checkPreviewReply({ ...fits, html: '"'.repeat(room / 2) }, max)).toThrow(
      expect.objectContaining({ code: 'payload_too_large', status: 400, param: 'html' }),
    )
    expect(() => checkPreviewReply({ ...fits, text: 'x'.repeat(30) }, max)).toThrow(
      expect.objectContaining({ code: 'payload_too_large', param: 'text' }),
    )
  })
})
