import { describe, expect, it } from 'vitest'
import { matchingWebhooks, subscribesTo } from './matching.js'

const t0 = new Date('2026-01-01T00:00:00.000Z')
const wh = (id: string, events: string[], enabled = true, createdAt = t0) => ({
  id,
  events,
  enabled,
  createdAt,
})

describe('matching', () => {
  it('matches the wildcard and listed types only', () => {
    expect(subscribesTo(['*'], 'email.opened')).toBe(true)
    expect(subscribesTo(['email.delivered', 'email.bounced'], 'email.bounced')).toBe(true)
    expect(subscribesTo(['email.delivered'], 'email.bounced')).toBe(false)
  })

  it('picks enabled, subscribed webhooks that existed when the event happened', () => {
    const list = [
      wh('a', ['*']),
      wh('b', ['email.bounced']),
      wh('c', ['*'], false),
      wh('d', ['email.delivered']),
      wh('e', ['*'], true, new Date('2026-01-02T00:00:00.000Z')),
    ]
    const got = matchingWebhooks(list, { type: 'email.delivered', createdAt: '2026-01-01T12:00:00.000Z' })
    expect(got.map((w) => w.id)).toEqual(['a', 'd'])
    expect(
      matchingWebhooks(list, { type: 'email.delivered', createdAt: t0.toISOString() }).map((w) => w.id),
    ).toEqual(['a', 'd'])
  })
})
