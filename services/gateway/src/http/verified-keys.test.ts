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

  it('keeps a key past its TTL for the stale grace only, and never hands it to get', () => {
    const c = new VerifiedKeys(5_000, 60_000)
    c.set('h', verified('proj_1'), c.generation, 1_000)
    expect(c.get('h', 6_000)).toBeUndefined()
    expect(c.stale('h', 6_000)).toBeDefined()
    expect(c.stale('h', 65_999)).toBeDefined()
    expect(c.stale('h', 66_000)).toBeUndefined()
    expect(c.stale('h', 7_000)).toBeUndefined() // dropped once past the grace
  })

  it('serves nothing stale with a grace of 0, past its expiresAt, or once invalidated or cleared', () => {
    const none = new VerifiedKeys(5_000, 0)
    none.set('h', verified('proj_1'), none.generation, 1_000)
    expect(none.stale('h', 6_000)).toBeUndefined()

    const c = new VerifiedKeys(5_000, 60_000)
    c.set('exp', verified('proj_1', new Date(7_000).toISOString()), c.generation, 1_000)
    c.set('a', verified('proj_1'), c.generation, 1_000)
    c.set('b', verified('proj_2'), c.generation, 1_000)
    c.set('c', verified('proj_3'), c.generation, 1_000)
    c.set('d', verified('proj_3'), c.generation, 1_000)
    expect(c.stale('exp', 6_999)).toBeDefined()
    expect(c.stale('exp', 7_000)).toBeUndefined()
    c.apply({ keyHashes: ['a'], projectIds: ['proj_2'], slugs: [] })
    expect(c.stale('a', 6_000)).toBeUndefined()
    expect(c.stale('b', 6_000)).toBeUndefined()
    c.forget('c')
    expect(c.stale('c', 6_000)).toBeUndefined()
    expect(c.stale('d', 6_000)).toBeDefined()
    c.clear()
    expect(c.stale('d', 6_000)).toBeUndefined()
  })
})
