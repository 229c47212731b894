import { describe, expect, it } from 'vitest'
import { SignInLimiter } from './session-routes.js'

describe('SignInLimiter', () => {
  it('blocks an address after too many failures until the window ends; success resets it', () => {
    const l = new SignInLimiter(3, 1000)
    for (let i = 0; i < 3; i++) l.fail('a', 0)
    expect(l.blocked('a', 10)).toBe(true)
    expect(l.blocked('b', 10)).toBe(false)
    expect(l.blocked('a', 1001)).toBe(false)
    l.fail('c', 0)
    l.succeed('c')
    expect(l.blocked('c', 0)).toBe(false)
  })
})
