import { describe, expect, it } from 'vitest'
import { dropped, ok, plan } from './outcome-fixtures.js'

describe('planOutcome: recipients listed as suppressed since the email was accepted', () => {
  it('rejects them with email.rejected (no SMTP reply) while the others are delivered; the email is rejected', () => {
    const p = plan([ok('a@x.test')], {
      recipients: [
        { address: 'a@x.test', status: 'queued' },
        { address: 'b@x.test', status: 'queued' },
      ],
      suppressed: [{ address: 'b@x.test', reason: 'hard_bounce' }],
    })
    expect(p.status).toBe('rejected')
    expect(p.sent).toBe(true)
    expect(p.recipients.map((r) => [r.address, r.status, r.smtpStatus, r.smtpResponse])).toEqual([
      ['b@x.test', 'rejected', null, null],
      ['a@x.test', 'delivered', 250, '250 2.0.0 Ok: queued'],
    ])
    expect(p.events.map((e) => [e.type, e.recipient ?? null])).toEqual([
      ['email.sent', null],
      ['email.rejected', 'b@x.test'],
      ['email.delivered', 'a@x.test'],
    ])
    expect(p.events[1]!.extra).toEqual({
      delivery: {
        status: 'rejected',
        provider: 'smtp',
        deliveryTimeMs: 1500,
        smtpStatusCode: null,
        smtpResponse: null,
      },
      suppression: { reason: 'hard_bounce' },
      terminal: true,
    })
    // Analytics counts as sent the recipients handed to the relay: not the one left out.
    expect(p.events[0]!.extra).toEqual({ messageId: '<email_1@acme.test>', recipientCount: 1 })
    expect(p.outcomes).toEqual(['rejected', 'delivered'])
    expect(p.suppress).toEqual([])
    expect(p.lastError).toBe('Not sent to b@x.test: on the suppression list (hard_bounce)')
  })

  it('every waiting recipient suppressed: nothing sent, no email.sent, no email.failed, the email ends rejected', () => {
    const p = plan([], {
      attempts: 2,
      recipients: [
        { address: 'a@x.test', status: 'deferred' },
        { address: 'b@x.test', status: 'queued' },
      ],
      suppressed: [
        { address: 'a@x.test', reason: 'complaint' },
        { address: 'b@x.test', reason: 'manual' },
      ],
    })
    expect(p.status).toBe('rejected')
    expect(p.sent).toBe(false)
    expect(p.failed).toBe(false)
    expect(p.nextAttemptAt).toBeNull()
    expect(p.events.map((e) => [e.type, e.recipient ?? null])).toEqual([
      ['email.rejected', 'a@x.test'],
      ['email.rejected', 'b@x.test'],
    ])
  })

  it('a suppressed recipient does not end the wait of another one deferred: the email stays deferred', () => {
    const p = plan([dropped('a@x.test')], {
      recipients: [
        { address: 'a@x.test', status: 'queued' },
        { address: 'b@x.test', status: 'queued' },
      ],
      suppressed: [{ address: 'b@x.test', reason: 'manual' }],
    })
    expect(p.status).toBe('deferred')
    expect(p.nextAttemptAt).not.toBeNull()
    expect(p.recipients.map((r) => [r.address, r.status])).toEqual([
      ['b@x.test', 'rejected'],
      ['a@x.test', 'deferred'],
    ])
    // The reply that keeps the email waiting, not the suppression.
    expect(p.lastError).toBe('Connection closed unexpectedly')

    // The retry delivers it: the email ends rejected, and says so rather than keeping the
    // deferral's reply; it was sent to one recipient of the two.
    const retry = plan([ok('a@x.test')], {
      attempts: 2,
      recipients: [
        { address: 'a@x.test', status: 'deferred' },
        { address: 'b@x.test', status: 'rejected' },
      ],
    })
    expect(retry.status).toBe('rejected')
    expect(retry.lastError).toBe('Not sent to b@x.test: rejected (its email.rejected says why)')
    expect(retry.events[0]!.extra).toEqual({ messageId: '<email_1@acme.test>', recipientCount: 1 })
  })
})
