import { describe, expect, it } from 'vitest'
import { BlockedAddressError, guardedLookup, literalBlockReason } from './url-guard.js'

describe('literalBlockReason', () => {
  it('refuses localhost names by their text, whatever the resolver answers', () => {
    for (const u of [
      'http://localhost/',
      'http://localhost./',
      'http://api.LOCALHOST./',
      'http://a.b.localhost:8/',
    ])
      expect(literalBlockReason(new URL(u))).toMatch(/localhost name/)
    for (const u of ['http://localhost.example.com/', 'http://mylocalhost/', 'https://example.com/'])
      expect(literalBlockReason(new URL(u))).toBeNull()
  })
})

describe('guardedLookup', () => {
  it('refuses a name that resolves to a private address at connect time', async () => {
    const err = await new Promise<unknown>((resolve) =>
      guardedLookup('127.0.0.1', { all: true }, (e) => resolve(e)),
    )
    expect(err).toBeInstanceOf(BlockedAddressError)
    expect((err as Error).message).toMatch(/127\.0\.0\.1.*private address/)
  })
})
