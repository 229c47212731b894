import type { RecipientStatus } from '@mailer/email-core'
import { describe, expect, it } from 'vitest'
import { dropped, now, ok, plan, policy, quota, unknownUser } from '../../test/outcome-fixtures.js'
import { MAX_DELIVERY_MS, planUnsendable } from './outcome.js'
import type { RecipientReply } from './smtp-reply.js'

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

// The relay's answers of the audit's cases (MAX_RETRIES=2: attempt 3 is the last).
const notAscii = (address: string): RecipientReply => ({
  address,
  stage: 'rcpt',
  code: 553,
  text: '553 5.6.7 Not sent: the address is not ASCII and the relay does not offer SMTPUTF8',
})
const later = (address: string): RecipientReply => ({
  address,
  stage: 'rcpt',
  code: 451,
  text: `451 4.3.0 ${address.split('@')[0]} later`,
})
const twoRetries = { ...policy, maxRetries: 2 }

/**
 * Runs attempts one after the other as the dispatcher would: each is given the recipients'
 * statuses the previous ones left, and the stored reply of those `failed` (what the claim reads).
 */
function attemptsOf(addresses: string[], answers: Array<(address: string) => RecipientReply | null>) {
  const stored = new Map(addresses.map((a) => [a, { status: 'queued' as RecipientStatus, reply: '' }]))
  let alreadySent = false
  return answers.map((answer, i) => {
    const recipients = addresses.map((address) => {
      const r = stored.get(address)!
      return { address, status: r.status, smtpResponse: r.status === 'failed' ? r.reply : null }
    })
    const replies = recipients
      .filter((r) => ['queued', 'deferred'].includes(r.status))
      .map((r) => answer(r.address)!)
    const p = plan(replies, { attempts: i + 1, alreadySent, recipients, policy: twoRetries })
    for (const u of p.recipients) stored.set(u.address, { status: u.status, reply: u.smtpResponse ?? '' })
    alreadySent ||= p.sent
    return p
  })
}
const failedEvents = (p: { events: Array<{ type: string; extra?: unknown }> }) =>
  p.events.filter((e) => e.type === 'email.failed').map((e) => e.extra)

describe('planOutcome: email.failed once, when the email ends failed', () => {
  it('a recipient refused at attempt 1 while another is deferred, then runs out: one email.failed, at the end, message_rejected', () => {
    const [first, second, last] = attemptsOf(
      ['bob1@x.test', 'jürgen@x.test'],
      [1, 2, 3].map(() => (a: string) => (a === 'jürgen@x.test' ? notAscii(a) : later(a))),
    )
    expect(first!.status).toBe('deferred')
    expect(first!.events.map((e) => [e.type, e.recipient])).toEqual([['email.deferred', 'bob1@x.test']])
    expect(first!.failed).toBe(false)
    // Why the email still waits, not the refusal.
    expect(first!.lastError).toBe('451 4.3.0 bob1 later')
    expect(second!.events.map((e) => e.type)).toEqual(['email.deferred'])
    expect(last!.status).toBe('failed')
    expect(last!.failed).toBe(true)
    expect(last!.events.map((e) => e.type)).toEqual(['email.failed'])
    // The refusal's reply, stored at attempt 1: the email failed because of it.
    expect(failedEvents(last!)).toEqual([{ code: 'message_rejected', message: notAscii('j').text }])
    expect(last!.lastError).toBe(notAscii('j').text)
  })

  it('a recipient refused at attempt 1, the other delivered at attempt 2: email.failed after the delivery', () => {
    const [first, second] = attemptsOf(
      ['carl@x.test', 'jürgen@x.test'],
      [(a) => (a === 'jürgen@x.test' ? notAscii(a) : later(a)), (a) => (a === 'carl@x.test' ? ok(a) : null)],
    )
    expect(failedEvents(first!)).toEqual([])
    expect(first!.status).toBe('deferred')
    expect(second!.status).toBe('failed')
    expect(second!.events.map((e) => [e.type, e.recipient ?? null])).toEqual([
      ['email.sent', null],
      ['email.delivered', 'carl@x.test'],
      ['email.failed', null],
    ])
    expect(failedEvents(second!)).toEqual([{ code: 'message_rejected', message: notAscii('j').text }])
  })

  it('an email that ends bounced gets no email.failed, though another recipient ran out of retries', () => {
    const plans = attemptsOf(
      ['dan@x.test', 'nope@x.test'],
      [1, 2, 3].map(() => (a: string) => (a === 'nope@x.test' ? unknownUser(a) : later(a))),
    )
    expect(plans.flatMap(failedEvents)).toEqual([])
    const last = plans[2]!
    expect(last.status).toBe('bounced')
    expect(last.failed).toBe(false)
    expect(last.recipients.map((r) => [r.address, r.status])).toEqual([['dan@x.test', 'failed']])
    expect(last.lastError).toBe('451 4.3.0 dan later')
  })

  it('a bounce on the last attempt is never the error: last_error is the reply of the recipient that ran out', () => {
    const p = plan([unknownUser('aaa@x.test'), later('zzz@x.test')], {
      attempts: 3,
      policy: twoRetries,
      recipients: [
        { address: 'aaa@x.test', status: 'deferred' },
        { address: 'zzz@x.test', status: 'deferred' },
      ],
    })
    expect(p.status).toBe('bounced')
    expect(failedEvents(p)).toEqual([])
    expect(p.lastError).toBe('451 4.3.0 zzz later')
  })

  it('running out on the last attempt after a delivery: retries_exhausted with the reply of the one that ran out', () => {
    const p = plan([ok('aaa@x.test'), later('zzz@x.test')], { attempts: 3, policy: twoRetries })
    expect(p.status).toBe('failed')
    expect(failedEvents(p)).toEqual([{ code: 'retries_exhausted', message: '451 4.3.0 zzz later' }])
    expect(p.lastError).toBe('451 4.3.0 zzz later')
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

  it('gives no email.failed when the email ends bounced', () => {
    const p = planUnsendable(
      [
        { address: 'a@x.test', status: 'bounced' },
        { address: 'b@x.test', status: 'deferred' },
      ],
      'content_expired',
      'gone',
      now,
    )
    expect(p.status).toBe('bounced')
    expect(p.failed).toBe(false)
    expect(p.recipients.map((r) => [r.address, r.status])).toEqual([['b@x.test', 'failed']])
    expect(p.events).toEqual([])
  })
})
