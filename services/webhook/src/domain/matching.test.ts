import { describe, expect, it } from 'vitest'
import { CLOCK_SKEW_GRACE_MS, matchingWebhooks, subscribesTo } from './matching.js'

const t0 = new Date('2026-01-01T00:00:00.000Z')
const wh = (id: string, events: string[], enabled = true, createdAt = t0) => ({
  id,
  events,
  enabled,
  createdAt,
})
const at = (ms: number) => new Date(t0.getTime() + ms).toISOString()

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

  it('gives an event stamped by a clock a few seconds behind the webhook service to the new webhook', () => {
    // Webhook created at t0 by the webhook service; the email service's clock reads up to 5 s less.
    expect(CLOCK_SKEW_GRACE_MS).toBe(5_000)
    const ids = (createdAt: string) =>
      matchingWebhooks([wh('a', ['*'])], { type: 'email.queued', createdAt }).map((w) => w.id)
    expect(ids(at(-1))).toEqual(['a'])
    expect(ids(at(-1_000))).toEqual(['a'])
    expect(ids(at(-5_000))).toEqual(['a'])
    // Older than that, the event happened before the webhook: not even a backlog sends it.
    expect(ids(at(-5_001))).toEqual([])
    expect(ids(at(-60_000))).toEqual([])
  })
})
