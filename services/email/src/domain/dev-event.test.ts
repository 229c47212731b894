import { describe, expect, it } from 'vitest'
import { type DevEmail, planDevEvent } from './dev-event.js'

const now = new Date('2026-01-02T00:00:01.500Z')
const email = (over: Partial<DevEmail> = {}): DevEmail => ({
  id: 'email_1',
  mode: 'live',
  // Handed to the relay already: the usual target of a late delivery event.
  status: 'sent',
  to: ['a@x.test', 'b@x.test'],
  createdAt: new Date('2026-01-02T00:00:00.000Z'),
  recipients: [
    { address: 'a@x.test', status: 'queued' },
    { address: 'b@x.test', status: 'queued' },
  ],
  ...over,
})

describe('planDevEvent', () => {
  it('fakes a delivery for the first to address when no recipient is named', () => {
    const plan = planDevEvent(email(), 'email.delivered', undefined, now)
    expect(plan.event).toEqual({
      type: 'email.delivered',
      recipient: 'a@x.test',
      at: now,
      extra: {
        delivery: {
          status: 'delivered',
          provider: 'dev',
          deliveryTimeMs: 1500,
          smtpStatusCode: 250,
          smtpResponse: expect.stringContaining('250'),
        },
        terminal: true,
        dev: true,
      },
    })
    expect(plan.recipient).toMatchObject({ address: 'a@x.test', status: 'delivered', smtpStatus: 250 })
    // One delivered, one still on its way.
    expect(plan.emailStatus).toBe('sent')
    expect(plan.suppress).toBeNull()
  })

  it('a bounce is hard, suppresses the address and makes the email bounced', () => {
    const plan = planDevEvent(email(), 'email.bounced', 'b@x.test', now)
    expect(plan.event.extra).toMatchObject({ bounce: { type: 'hard' }, delivery: { status: 'bounced' } })
    expect(plan.recipient).toMatchObject({ address: 'b@x.test', status: 'bounced', bounceType: 'hard' })
    expect(plan.emailStatus).toBe('bounced')
    expect(plan.suppress).toBe('hard_bounce')
  })

  it('a complaint suppresses as complaint and outranks a bounce', () => {
    const bounced = email({
      recipients: [
        { address: 'a@x.test', status: 'bounced' },
        { address: 'b@x.test', status: 'delivered' },
      ],
    })
    const plan = planDevEvent(bounced, 'email.complained', 'a@x.test', now)
    expect(plan.recipient?.status).toBe('complained')
    expect(plan.emailStatus).toBe('complained')
    expect(plan.suppress).toBe('complaint')
  })

  it('never moves a recipient down the ranking: the event is recorded, nothing else changes', () => {
    const done = email({
      status: 'bounced',
      recipients: [{ address: 'a@x.test', status: 'bounced' }],
      to: ['a@x.test'],
    })
    const plan = planDevEvent(done, 'email.delivered', undefined, now)
    expect(plan.event.type).toBe('email.delivered')
    expect(plan.recipient).toBeNull()
    expect(plan.emailStatus).toBeNull()
  })

  it('keeps a test email test while its recipient moves', () => {
    const plan = planDevEvent(email({ mode: 'test', status: 'test' }), 'email.delivered', undefined, now)
    expect(plan.recipient?.status).toBe('delivered')
    expect(plan.emailStatus).toBeNull()
  })

  it('keeps an email still in progress as it is while another recipient waits', () => {
    for (const status of ['queued', 'scheduled', 'deferred', 'sending']) {
      const plan = planDevEvent(email({ status }), 'email.bounced', 'a@x.test', now)
      expect(plan.recipient?.status, status).toBe('bounced')
      expect(plan.emailStatus, status).toBeNull()
    }
    const last = email({
      status: 'queued',
      recipients: [
        { address: 'a@x.test', status: 'bounced' },
        { address: 'b@x.test', status: 'queued' },
      ],
    })
    expect(planDevEvent(last, 'email.delivered', 'b@x.test', now).emailStatus).toBe('bounced')
  })

  it('keeps a canceled email and its recipients as they were', () => {
    const plan = planDevEvent(email({ status: 'canceled' }), 'email.delivered', undefined, now)
    expect(plan.event.type).toBe('email.delivered')
    expect(plan.recipient).toBeNull()
    expect(plan.emailStatus).toBeNull()
  })

  it('gives sent and failed their own data, for the whole email as the dispatcher records them', () => {
    const sent = planDevEvent(email(), 'email.sent', undefined, now)
    expect(sent.event.extra).toEqual({
      messageId: '<email_1.dev@mailer.invalid>',
      recipientCount: 2,
      dev: true,
    })
    expect(sent.event.recipient).toBeNull()
    expect(sent.recipient).toMatchObject({ address: 'a@x.test', status: 'sent' })
    const failed = planDevEvent(email(), 'email.failed', 'b@x.test', now)
    expect(failed.event.extra).toMatchObject({ code: 'dev_event', dev: true })
    expect(failed.event.recipient).toBeNull()
    expect(failed.recipient).toMatchObject({ address: 'b@x.test', status: 'failed' })
    expect(failed.emailStatus).toBe('failed')
    expect(planDevEvent(email(), 'email.bounced', 'b@x.test', now).event).toMatchObject({
      recipient: 'b@x.test',
      extra: { recipientCount: 2 },
    })
  })

  it('measures the delivery time from the scheduled time, clamped to what the column holds', () => {
    const scheduledAt = new Date('2026-01-02T00:00:01.000Z')
    const plan = planDevEvent(email({ scheduledAt }), 'email.bounced', undefined, now)
    expect(plan.recipient?.deliveryMs).toBe(500)
    expect(plan.event.extra).toMatchObject({ delivery: { deliveryTimeMs: 500 } })
    const old = email({ createdAt: new Date('2025-01-01T00:00:00.000Z') })
    expect(planDevEvent(old, 'email.delivered', undefined, now).recipient?.deliveryMs).toBe(2_147_483_647)
    expect(planDevEvent(email(), 'email.deferred', undefined, now).recipient?.deliveryMs).toBeNull()
  })

  it('refuses an address that is not a recipient', () => {
    expect(() => planDevEvent(email(), 'email.delivered', 'z@x.test', now)).toThrow(
      expect.objectContaining({ code: 'invalid_body', param: 'recipient' }),
    )
  })
})
