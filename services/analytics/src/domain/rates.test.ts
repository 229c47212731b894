import { describe, expect, it } from 'vitest'
import { rate } from './rates.js'

describe('rate', () => {
  it('is null when nothing was sent', () => {
    expect(rate(0, 0)).toBeNull()
    expect(rate(3, 0)).toBeNull()
  })
  it('rounds n / sent to 4 decimals', () => {
    expect(rate(1, 3)).toBe(0.3333)
    expect(rate(2, 3)).toBe(0.6667)
    expect(rate(7, 7)).toBe(1)
    expect(rate(0, 5)).toBe(0)
    expect(rate(1, 80_000)).toBe(0)
    expect(rate(1, 5_000)).toBe(0.0002)
    expect(rate(9, 11)).toBe(0.8182)
  })
})
