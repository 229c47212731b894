import type { VerifyKeyResponse } from '@mailer/contracts'
import { describe, expect, it } from 'vitest'
import { VerifiedKeys } from './verified-keys.js'

const verified = (projectId: string, expiresAt: string | null = null): VerifyKeyResponse =>
  ({
    project: { id: projectId, slug: 'p', name: 'P', dailyLimit: 0, rpcEnabled: true, defaultFrom: null },
    key: { id: 'key_1', name: 'k', mode: 'live', prefix: 'fs_live_abcd', expiresAt },
  }) as unknown as VerifyKeyResponse

describe('VerifiedKeys', () => {
  it('serves a verified key until its TTL passes', () => {
    const c = new VerifiedKeys(5_000)
    c.set('h', verified('proj_1'), c.generation, 1_000)
    expect(c.get('h', 5_999)).toBeDefined()
    expect(c.get('h', 6_000)).toBeUndefined()
  })

  it('never serves a key past its expiresAt', () => {
    const c = new VerifiedKeys(60_000)
    c.set('h', verified('proj_1', new Date(2_000).toISOString()), c.generation, 1_000)
    expect(c.get('h', 1_999)).toBeDefined()
    expect(c.get('h', 2_000)).toBeUndefined()
  })

  it('forgets every key on clear (a reconnect), and keeps no answer that was in flight across it', () => {
    const c = new VerifiedKeys(60_000)
    c.set('a', verified('proj_1'))
    const seen = c.generation
    c.clear()
    expect(c.get('a')).toBeUndefined()
    c.set('b', verified('proj_1'), seen)
    expect(c.get('b')).toBeUndefined()
  })

  it('drops keys named by an invalidation, and every key of an invalidated project', () => {
    const c = new VerifiedKeys(60_000)
    c.set('a', verified('proj_1'))
    c.set('b', verified('proj_1'))
    c.set('c', verified('proj_2'))
    c.apply({ keyHashes: ['c'], projectIds: [], slugs: [] })
    expect(c.get('c')).toBeUndefined()
    c.apply({ keyHashes: [], projectIds: ['proj_1'], slugs: [] })
    expect(c.get('a')).toBeUndefined()
    expect(c.get('b')).toBeUndefined()
  })

  it('caches nothing with a TTL of 0', () => {
    const c = new VerifiedKeys(0)
    c.set('h', verified('proj_1'))
    expect(c.get('h')).toBeUndefined()
  })

  it('does not keep an answer to a verification that was in flight when an invalidation came', () => {
    const c = new VerifiedKeys(60_000)
    const seen = c.generation
    c.apply({ keyHashes: ['h'], projectIds: [], slugs: [] }) // the key is revoked meanwhile
    c.set('h', verified('proj_1'), seen)
    expect(c.get('h')).toBeUndefined()
    c.set('h', verified('proj_1'), c.generation)
    expect(c.get('h')).toBeDefined()
  })
})
