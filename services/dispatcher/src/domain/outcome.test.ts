import type { RecipientStatus } from '@mailer/email-core'
import { describe, expect, it } from 'vitest'
import { MAX_DELIVERY_MS, type PlanInput, planOutcome, planUnsendable } from './outcome.js'
import type { RecipientReply } from './smtp-reply.js'

const now = new Date('2026-01-01T12:00:00.000Z')
const createdAt = new Date('2026-01-01T11:59:58.500Z')
const policy = { maxRetries: 8, baseSeconds: 15, maxSeconds: 3600, platformLimitSeconds: 3600 }
const ok = (address: string): RecipientReply => ({
  address,
  stage: 'message',
  code: 250,
  text: '250 2.0.0 Ok: queued',
})
const unknownUser = (address: string): RecipientReply => ({
  address,
  stage: 'rcpt',
  code: 550,
  text: '550 5.1.1 User unknown',
})
const dropped = (address: string): RecipientReply => ({
  address,
  stage: 'connection',
  code: null,
  text: 'Connection closed unexpectedly',
})
const quota = (address: string): RecipientReply => ({
  address,
  stage: 'message',
  code: 451,
  text: '451 4.7.1 Daily sending quota exceeded',
})

function plan(replies: RecipientReply[], over: Partial<PlanInput> = {}) {
  const statuses =
    over.recipients ?? replies.map((r) => ({ address: r.address, status: 'queued' as RecipientStatus }))
  return planOutcome({
    attempts: 1,
    alreadySent: false,
    dueAt: createdAt,
    recipients: statuses,
    result: { provider: 'smtp', messageId: '<email_1@acme.test>', replies },
    now,
    policy,
    random: () => 1,
    ...over,
  })
}

describe('planOutcome', () => {
  it('clamps a delivery time to what its column holds (about 24.8 days)', () => {
    const p = plan([ok('a@x.test')], { dueAt: new Date(now.getTime() - 40 * 86_400_000) })
    expect(p.recipients[0]!.deliveryMs).toBe(MAX_DELIVERY_MS)
    expect((p.events[1]!.extra as any).delivery.deliveryTimeMs).toBe(MAX_DELIVERY_MS)
  })

  it('relay acceptance: every recipient delivered, one email.sent, one email.delivered each', () => {
    const p = plan([ok('a@x.test'), ok('b@x.test')])
    expect(p.status).toBe('delivered')
    expect(p.nextAttemptAt).toBeNull()
    expect(p.sent).toBe(true)
    expect(p.recipients.map((r) => [r.address, r.status, r.smtpStatus, r.deliveryMs])).toEqual([
      ['a@x.test', 'delivered', 250, 1500],
      ['b@x.test', 'delivered', 250, 1500],
    ])
    expect(p.events.map((e) => [e.type, e.recipient ?? null])).toEqual([
      ['email.sent', null],
      ['email.delivered', 'a@x.test'],
      ['email.delivered', 'b@x.test'],
    ])
    expect(p.events[0]!.extra).toEqual({ messageId: '<email_1@acme.test>', recipientCount: 2 })
    expect(p.events[1]!.extra).toEqual({
      delivery: {
        status: 'delivered',
        provider: 'smtp',
        deliveryTimeMs: 1500,
        smtpStatusCode: 250,
        smtpResponse: '250 2.0.0 Ok: queued',
      },
      terminal: true,
    })
    expect(p.outcomes).toEqual(['delivered', 'delivered'])
  })

  it('a 550 for one recipient bounces it (hard, suppressed) while the others are delivered', () => {
    const p = plan([ok('a@x.test'), unknownUser('nobody@x.test')])
    expect(p.status).toBe('bounced')
    expect(p.suppress).toEqual(['nobody@x.test'])
    expect(p.recipients[1]).toMatchObject({ status: 'bounced', bounceType: 'hard', smtpStatus: 550 })
    const bounce = p.events.find((e) => e.type === 'email.bounced')!
    expect(bounce.recipient).toBe('nobody@x.test')
    expect(bounce.extra).toMatchObject({
      bounce: { type: 'hard', reason: '550 5.1.1 User unknown' },
      recipientCount: 2,
      delivery: { status: 'bounced', smtpStatusCode: 550 },
      terminal: true,
    })
    expect(p.outcomes).toEqual(['delivered', 'bounced'])
  })

  it('a platform limit puts the email back to queued for an hour with email.retrying', () => {
    const p = plan([quota('a@x.test'), quota('b@x.test')], { attempts: 3 })
    expect(p.status).toBe('queued')
    expect(p.nextAttemptAt).toEqual(new Date(now.getTime() + 3_600_000))
    expect(p.recipients.map((r) => r.status)).toEqual(['queued', 'queued'])
    expect(p.events).toEqual([
      {
        type: 'email.retrying',
        extra: {
          code: 'platform_limit',
          message: '451 4.7.1 Daily sending quota exceeded',
          attempt: 3,
          delaySeconds: 3600,
        },
      },
    ])
    expect(p.outcomes).toEqual(['retrying', 'retrying'])
    expect(p.sent).toBe(false)
  })

  it('a transient failure defers every recipient with the backoff of this retry', () => {
    const p = plan([dropped('a@x.test')], { attempts: 2 })
    expect(p.status).toBe('deferred')
    expect(p.nextAttemptAt).toEqual(new Date(now.getTime() + 30_000))
    expect(p.events).toEqual([
      {
        type: 'email.deferred',
        recipient: 'a@x.test',
        extra: {
          delivery: {
            status: 'deferred',
            provider: 'smtp',
            deliveryTimeMs: 1500,
            smtpStatusCode: null,
            smtpResponse: 'Connection closed unexpectedly',
          },
          terminal: false,
        },
      },
    ])
    expect(p.lastError).toBe('Connection closed unexpectedly')
  })

  it('after 8 retries a transient failure or a platform limit fails the email with email.failed', () => {
    for (const reply of [dropped('a@x.test'), quota('a@x.test')]) {
      const p = plan([reply], { attempts: 9 })
      expect(p.status).toBe('failed')
      expect(p.failed).toBe(true)
      expect(p.nextAttemptAt).toBeNull()
      expect(p.recipients[0]!.status).toBe('failed')
      expect(p.events.map((e) => e.type)).toEqual(['email.failed'])
      expect(p.events[0]!.extra).toEqual({ code: 'retries_exhausted', message: reply.text })
      expect(p.outcomes).toEqual(['failed'])
    }
  })

  it('a message the relay refuses fails without bouncing or suppressing anyone', () => {
    const reply: RecipientReply = { address: 'a@x.test', stage: 'message', code: 554, text: '554 5.7.1 Spam' }
    const p = plan([reply])
    expect(p.status).toBe('failed')
    expect(p.suppress).toEqual([])
    expect(p.events[0]).toMatchObject({
      type: 'email.failed',
      extra: { code: 'message_rejected', message: '554 5.7.1 Spam' },
    })
  })

  it('keeps the email deferred while some recipients wait for a retry, whatever the others did', () => {
    const p = plan([ok('a@x.test'), unknownUser('b@x.test'), dropped('c@x.test')])
    expect(p.status).toBe('deferred')
    expect(p.nextAttemptAt).not.toBeNull()
    expect(p.recipients.map((r) => r.status)).toEqual(['delivered', 'bounced', 'deferred'])
  })

  it('a retry delivers the rest, derives the final status from all recipients, and does not repeat email.sent', () => {
    const p = plan([ok('c@x.test')], {
      attempts: 2,
      alreadySent: true,
      recipients: [
        { address: 'a@x.test', status: 'delivered' },
        { address: 'b@x.test', status: 'bounced' },
        { address: 'c@x.test', status: 'deferred' },
      ],
    })
    expect(p.status).toBe('bounced')
    expect(p.events.map((e) => e.type)).toEqual(['email.delivered'])
    expect(p.recipients).toHaveLength(1)
  })
})

describe('planUnsendable', () => {
  it('fails every recipient still on its way and the email with the given code', () => {
    const p = planUnsendable(
      [
        { address: 'a@x.test', status: 'delivered' },
        { address: 'b@x.test', status: 'deferred' },
      ],
      'content_expired',
      'gone',
      now,
    )
    expect(p.status).toBe('failed')
    expect(p.recipients).toEqual([
      {
        address: 'b@x.test',
        status: 'failed',
        smtpStatus: null,
        smtpResponse: null,
        deliveryMs: null,
        bounceType: null,
      },
    ])
    expect(p.events).toEqual([{ type: 'email.failed', extra: { code: 'content_expired', message: 'gone' } }])
  })
})
