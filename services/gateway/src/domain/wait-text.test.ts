import { describe, expect, it } from 'vitest'
import { waitText } from './wait-text.js'

describe('waitText', () => {
  it('says seconds under a minute and whole minutes, rounded up, from one on', () => {
    expect(waitText(0.2)).toBe('1 s')
    expect(waitText(42)).toBe('42 s')
    expect(waitText(60)).toBe('1 minute')
    expect(waitText(61)).toBe('2 minutes')
    expect(waitText(300)).toBe('5 minutes')
  })
})
