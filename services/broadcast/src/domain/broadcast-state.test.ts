import { MailerError } from '@mailer/contracts'
import { describe, expect, it } from 'vitest'
import { isCancelable, planSend } from './broadcast-state.js'

const now = new Date('2026-03-01T12:00:00Z')

describe('planSend', () => {
  it('sends now without scheduledAt', () => {
    expect(planSend(undefined, now)).toEqual({ status: 'sending', scheduledAt: null, resumeAt: now })
  })

  it('schedules a future time given with an offset', () => {
    const plan = planSend('2026-03-02T09:00:00+02:00', now)
    expect(plan.status).toBe('scheduled')
    expect(plan.scheduledAt?.toISOString()).toBe('2026-03-02T07:00:00.000Z')
    expect(plan.resumeAt).toEqual(plan.scheduledAt)
  })

  it('rejects a past time, a time without offset, and more than 30 days ahead', () => {
    for (const bad of ['2026-03-01T11:00:00Z', '2026-03-02T09:00:00', '2026-04-15T00:00:00Z', 42]) {
      try {
        planSend(bad, now)
        expect.unreachable(`${String(bad)} should fail`)
      } catch (e) {
        expect(e).toBeInstanceOf(MailerError)
        expect(e).toMatchObject({ code: 'invalid_schedule', param: 'scheduledAt', status: 400 })
      }
    }
  })
})

describe('isCancelable', () => {
  it('holds for broadcasts the sender may still work on, not drafts or final ones', () => {
    expect(['scheduled', 'sending', 'paused'].every(isCancelable)).toBe(true)
    expect(['draft', 'sent', 'canceled'].some(isCancelable)).toBe(false)
  })
})
