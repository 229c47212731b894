import { describe, expect, it } from 'vitest'
import type { WebhookTarget } from '../domain/matching.js'
import { WebhookCache } from './webhook-cache.js'

const hook = (id: string): WebhookTarget => ({ id, events: ['*'], enabled: true, createdAt: new Date(0) })

describe('WebhookCache', () => {
  it('loads a project once, then serves it from memory until invalidated', async () => {
    let loads = 0
    const cache = new WebhookCache(async () => [hook(`w${++loads}`)], 60_000)
    const [a, b] = await Promise.all([cache.forProject('p'), cache.forProject('p')])
    expect(a).toEqual([hook('w1')])
    expect(b).toBe(a)
    expect(await cache.forProject('p')).toBe(a)
    expect(loads).toBe(1)
    cache.invalidate('p')
    expect(await cache.forProject('p')).toEqual([hook('w2')])
  })

  it('never stores a list whose load started before an invalidation', async () => {
    let release!: () => void
    let loads = 0
    const cache = new WebhookCache(async () => {
      loads++
      if (loads === 1) await new Promise<void>((r) => (release = r))
      return [hook(`w${loads}`)]
    }, 60_000)
    const stale = cache.forProject('p')
    await new Promise((r) => setImmediate(r))
    cache.invalidate('p')
    release()
    expect(await stale).toEqual([hook('w1')])
    expect(await cache.forProject('p')).toEqual([hook('w2')])
  })

  it('expires entries after the TTL', async () => {
    let loads = 0
    const cache = new WebhookCache(async () => [hook(`w${++loads}`)], 1)
    await cache.forProject('p')
    await new Promise((r) => setTimeout(r, 5))
    expect(await cache.forProject('p')).toEqual([hook('w2')])
  })
})
