import { describe, expect, it } from 'vitest'
import { AddSuppressionBody, SuppressionsQuery, suppressionRank } from './suppressions.js'

describe('suppression input', () => {
  it('lower-cases the address and defaults the reason to manual', () => {
    expect(AddSuppressionBody.parse({ address: ' Ann.Lee+x@Mail.Example.com ' })).toEqual({
      address: 'ann.lee+x@mail.example.com',
      reason: 'manual',
    })
  })

  it('rejects what cannot be an address', () => {
    for (const address of [
      'ann',
      'ann@',
      '@example.com',
      'ann@example',
      'a b@example.com',
      'ann@example.com.',
      '<ann@example.com>',
    ]) {
      expect(AddSuppressionBody.safeParse({ address }).success, address).toBe(false)
    }
  })

  it('ranks reasons manual < hard_bounce < complaint', () => {
    expect(suppressionRank('manual')).toBeLessThan(suppressionRank('hard_bounce'))
    expect(suppressionRank('hard_bounce')).toBeLessThan(suppressionRank('complaint'))
  })

  it('pages 1-200, 50 by default', () => {
    expect(SuppressionsQuery.parse({})).toEqual({ limit: 50 })
    expect(SuppressionsQuery.safeParse({ limit: '201' }).success).toBe(false)
  })
})
