import type { EventMessage } from '@mailer/contracts'
import { describe, expect, it } from 'vitest'
import { classify, domainOf } from './event-effects.js'

const msg = (
  type: string,
  data: Record<string, unknown> = {},
  extra: Partial<EventMessage['event']> = {},
): EventMessage => ({
  projectId: 'proj_1',
  event: {
    id: 'evt_1',
    type,
    createdAt: '2026-03-10T13:45:00.000Z',
    data: {
      emailId: 'email_1',
      recipient: 'Bob@Example.COM',
      from: 'a@b.c',
      subject: 's',
      tags: {},
      ...data,
    },
    ...extra,
  },
})

/** The effect of the event's own counter (a bounce also counts its email's sends). */
const effect = (m: EventMessage) => {
  const c = classify(m)
  if (c.kind !== 'counted') throw new Error(`expected counted, got ${c.kind}`)
  return c.effects.at(-1)!
}

describe('classify', () => {
  it('maps each counted type to its counter', () => {
    const pairs = [
      ['email.sent', 'sent'],
      ['email.delivered', 'delivered'],
      ['email.deferred', 'deferred'],
      ['email.bounced', 'bounced'],
      ['email.complained', 'complained'],
      ['email.rejected', 'rejected'],
      ['email.failed', 'failed'],
      ['email.opened', 'opened'],
      ['email.clicked', 'clicked'],
    ]
    for (const [type, counter] of pairs) expect(effect(msg(type!)).counter).toBe(counter)
  })

  it('ignores types that count nothing, and the synthetic webhook test event', () => {
    for (const t of [
      'email.queued',
      'email.scheduled',
      'email.retrying',
      'email.canceled',
      'email.test',
      'something.else',
    ]) {
      expect(classify(msg(t)).kind).toBe('ignored')
    }
    expect(classify(msg('email.delivered', { test: true })).kind).toBe('ignored')
  })

  it('rejects an event whose createdAt is not a date', () => {
    expect(classify(msg('email.sent', {}, { createdAt: 'yesterday' })).kind).toBe('invalid')
    expect(classify(msg('email.sent', {}, { createdAt: '-010000-01-01T00:00:00Z' })).kind).toBe('invalid')
    expect(classify(msg('email.sent', {}, { createdAt: '+020000-01-01T00:00:00Z' })).kind).toBe('invalid')
  })

  it('keys outcomes once per email and recipient, clicks per event', () => {
    const a = effect(msg('email.sent', {}, { id: 'evt_a' }))
    const b = effect(msg('email.sent', {}, { id: 'evt_b' }))
    // One send key per email, whatever recipient a (dev-route) sent event names.
    expect(a.key).toBe('email.sent|email_1|*')
    expect(b.key).toBe(a.key)
    expect(effect(msg('email.sent', { recipient: 'c@d.e' })).key).toBe(a.key)
    expect(effect(msg('email.delivered')).key).toBe('email.delivered|email_1|Bob@Example.COM')
    expect(effect(msg('email.delivered', { recipient: 'c@d.e' })).key).not.toBe(
      effect(msg('email.delivered')).key,
    )
    expect(effect(msg('email.failed', { recipient: null })).key).toBe('email.failed|email_1|*')
    expect(effect(msg('email.clicked', {}, { id: 'evt_c1' })).key).toBe('evt_c1')
  })

  it('records the delivery time of deliveries only, when it is a sane number', () => {
    expect(
      effect(msg('email.delivered', { delivery: { status: 'ok', provider: 'smtp', deliveryTimeMs: 420 } }))
        .deliveryMs,
    ).toBe(420)
    expect(effect(msg('email.delivered')).deliveryMs).toBeNull()
    expect(effect(msg('email.delivered', { delivery: { deliveryTimeMs: -5 } })).deliveryMs).toBeNull()
    expect(effect(msg('email.delivered', { delivery: { deliveryTimeMs: '12' } })).deliveryMs).toBeNull()
    expect(effect(msg('email.bounced', { delivery: { deliveryTimeMs: 420 } })).deliveryMs).toBeNull()
  })

  it('counts tags on sent and the recipient domain on bounces', () => {
    expect(effect(msg('email.sent', { tags: { plan: 'pro', kind: 'welcome' } })).dimensions).toEqual([
      { kind: 'tag', value: 'plan:pro' },
      { kind: 'tag', value: 'kind:welcome' },
    ])
    expect(effect(msg('email.delivered', { tags: { plan: 'pro' } })).dimensions).toEqual([])
    expect(effect(msg('email.bounced')).dimensions).toEqual([
      { kind: 'bounced_domain', value: 'example.com' },
    ])
    expect(effect(msg('email.bounced', { recipient: null })).dimensions).toEqual([])
  })
})

describe('domainOf', () => {
  it('lower-cases the part after the last @', () => {
    expect(domainOf('x@Mail.Example.org')).toBe('mail.example.org')
    expect(domainOf('"a@b"@c.d')).toBe('c.d')
    expect(domainOf('Bob <bob@x.io>')).toBe('x.io')
    expect(domainOf('nope')).toBeNull()
    expect(domainOf('a@')).toBeNull()
    expect(domainOf(null)).toBeNull()
  })
})

describe('clean', () => {
  it('drops NUL (PostgreSQL text cannot hold it) from keys and dimension values', () => {
    const e = effect(msg('email.sent', { emailId: 'email_\u00001', tags: { 'k\u0000': 'v' } }))
    expect(e.key).toBe('email.sent|email_1|*')
    expect(e.dimensions).toEqual([{ kind: 'tag', value: 'k:v' }])
    expect(effect(msg('email.delivered', { recipient: 'a\u0000@b.c' })).key).toBe(
      'email.delivered|email_1|a@b.c',
    )
    expect(effect(msg('email.bounced', { recipient: 'a@b\u0000.c' })).dimensions).toEqual([
      { kind: 'bounced_domain', value: 'b.c' },
    ])
  })
})

describe('email.sent with several recipients', () => {
  it('counts one send per recipient so per-recipient outcomes stay rates', () => {
    const r = classify({
      projectId: 'proj_a',
      event: {
        id: 'evt_1',
        type: 'email.sent',
        createdAt: '2026-03-10T13:45:00.000Z',
        data: {
          emailId: 'email_1',
          recipient: null,
          from: 'a@b.c',
          subject: 's',
          tags: {},
          recipientCount: 3,
        },
      },
    })
    expect(r.kind === 'counted' && r.effects[0]!.amount).toBe(3)
  })

  it('a bounce also counts the sends of its email, under the same key as email.sent', () => {
    const r = classify(msg('email.bounced', { recipientCount: 2, tags: { plan: 'pro' } }))
    if (r.kind !== 'counted') throw new Error(r.kind)
    expect(r.effects).toEqual([
      expect.objectContaining({
        key: 'email.sent|email_1|*',
        counter: 'sent',
        amount: 2,
        dimensions: [{ kind: 'tag', value: 'plan:pro' }],
      }),
      expect.objectContaining({
        key: 'email.bounced|email_1|Bob@Example.COM',
        counter: 'bounced',
        amount: 1,
      }),
    ])
    expect(effect(msg('email.sent')).key).toBe(r.effects[0]!.key)
  })
})
