import { describe, expect, it } from 'vitest'
import { truncate } from './truncate.js'

/** A lone surrogate (half an emoji): with the `u` flag a whole pair is one code point, not Cs. */
const LONE = /\p{Cs}/u

describe('truncate', () => {
  it('cuts at max code units, like slice, when no emoji is split', () => {
    expect(truncate('abcdef', 3)).toBe('abc')
    expect(truncate('abc', 3)).toBe('abc')
    expect(truncate('ab', 3)).toBe('ab')
    expect(truncate('a😀b', 3)).toBe('a😀')
    expect(truncate('abc', 0)).toBe('')
  })

  it('drops an emoji whose second half is past the limit instead of keeping its first half', () => {
    const s = `${'a'.repeat(199)}😀b`
    const cut = truncate(s, 200)
    expect(cut).toBe('a'.repeat(199))
    expect(LONE.test(cut)).toBe(false)
    expect(truncate('😀😀', 3)).toBe('😀')
    expect(truncate('😀', 1)).toBe('')
  })

  it('never answers more than max code units', () => {
    for (let max = 0; max <= 9; max++) {
      const cut = truncate('a😀b😀😀c', max)
      expect(cut.length).toBeLessThanOrEqual(max)
      expect(LONE.test(cut)).toBe(false)
    }
  })
})
