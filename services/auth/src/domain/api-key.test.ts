import { KEY_RE } from '@mailer/contracts'
import { describe, expect, it } from 'vitest'
import { generateKey, hashKey, keyStateError } from './api-key.js'

describe('generateKey', () => {
  it('makes keys of the documented form with a 12-character prefix and a SHA-256 hash', () => {
    const { key, prefix, hash } = generateKey('live')
    expect(key).toMatch(KEY_RE)
    expect(key.startsWith('fs_live_')).toBe(true)
    expect(prefix).toBe(key.slice(0, 12))
    expect(hash).toBe(hashKey(key))
    expect(hash).toMatch(/^[0-9a-f]{64}$/)
    expect(generateKey('test').key.startsWith('fs_test_')).toBe(true)
    expect(generateKey('live').key).not.toBe(key)
  })
})

describe('keyStateError', () => {
  const now = new Date('2026-01-01T00:00:00Z')
  const ok = { revokedAt: null, expiresAt: null, projectDisabled: false }
  it('accepts a live key', () => expect(keyStateError(ok, now)).toBeNull())
  it('reports revoked before expired before disabled', () => {
    expect(keyStateError({ revokedAt: now, expiresAt: new Date(0), projectDisabled: true }, now)?.code).toBe(
      'revoked_api_key',
    )
    expect(keyStateError({ ...ok, expiresAt: now, projectDisabled: true }, now)?.code).toBe('expired_api_key')
    expect(keyStateError({ ...ok, projectDisabled: true }, now)?.code).toBe('project_disabled')
    expect(keyStateError({ ...ok, projectDisabled: true }, now)?.status).toBe(403)
  })
  it('keeps a key valid until its expiry instant', () => {
    expect(keyStateError({ ...ok, expiresAt: new Date(now.getTime() + 1) }, now)).toBeNull()
  })
})
