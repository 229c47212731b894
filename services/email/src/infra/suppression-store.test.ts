import { describe, expect, it } from 'vitest'
import { decodeSuppressionCursor, encodeSuppressionCursor } from './suppression-store.js'

describe('suppression cursor', () => {
  it('round-trips any address, including the characters a plain split would cut', () => {
    const at = new Date('2026-01-02T03:04:05.678Z')
    const address = 'we|ird"quote@example.com'
    expect(decodeSuppressionCursor(encodeSuppressionCursor({ createdAt: at, address }))).toEqual({
      createdAt: at,
      address,
    })
  })

  it('rejects anything else as invalid_query on cursor', () => {
    for (const bad of [
      'bm9wZQ',
      Buffer.from('["nope","a@b.c"]').toString('base64url'),
      Buffer.from('[1]').toString('base64url'),
    ]) {
      expect(() => decodeSuppressionCursor(bad)).toThrow(
        expect.objectContaining({ code: 'invalid_query', param: 'cursor' }),
      )
    }
  })
})
