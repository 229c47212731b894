import type { TrackingHit } from '@mailer/contracts'
import { describe, expect, it } from 'vitest'
import { planHits, type TrackedEmail } from './tracking-plan.js'

const email = (id: string, over: Partial<TrackedEmail> = {}): TrackedEmail => ({
  summary: { id, projectId: 'proj_1', mode: 'live', from: 'a@x.test', subject: 'Hi', tags: {} },
  recipient: 'ann@x.test',
  openedAt: null,
  firstClickedAt: null,
  ...over,
})
const emails = (...list: TrackedEmail[]) => new Map(list.map((e) => [e.summary.id, e]))

let n = 0
const hit = (kind: 'open' | 'click', emailId: string, at: string): TrackingHit =>
  kind === 'open'
    ? { kind, id: `evt_${++n}`, emailId, at, userAgent: 'UA', requestId: 'r' }
    : { kind, id: `evt_${++n}`, emailId, at, userAgent: 'UA', requestId: 'r', url: 'https://x.test/' }

describe('planHits', () => {
  it('takes the earliest open of an unopened email, whatever the order, and no other', () => {
    const later = hit('open', 'email_a', '2026-01-01T10:05:00Z')
    const first = hit('open', 'email_a', '2026-01-01T10:00:00Z')
    const opened = hit('open', 'email_b', '2026-01-01T09:00:00Z')
    const plan = planHits(
      [later, first, opened],
      emails(email('email_a'), email('email_b', { openedAt: new Date('2026-01-01T08:00:00Z') })),
    )
    expect(plan.events.map((e) => [e.index, e.event.id, e.event.type])).toEqual([
      [1, first.id, 'email.opened'],
    ])
    expect(plan.events[0]!.event.createdAt).toBe('2026-01-01T10:00:00.000Z')
    expect(plan.emails).toEqual([
      { id: 'email_a', opened_at: '2026-01-01T10:00:00.000Z', first_clicked_at: null },
    ])
  })

  it('adds every click once, and moves first_clicked_at only to an earlier click', () => {
    const c1 = hit('click', 'email_a', '2026-01-01T10:03:00Z')
    const c2 = hit('click', 'email_a', '2026-01-01T10:01:00Z')
    const late = hit('click', 'email_b', '2026-01-01T12:00:00Z')
    const plan = planHits(
      [c1, c2, { ...c1 }, late],
      emails(email('email_a'), email('email_b', { firstClickedAt: new Date('2026-01-01T11:00:00Z') })),
    )
    // The copy of c1 (a redelivery in the same group) is one hit: index 2 adds nothing.
    expect(plan.events.map((e) => [e.index, e.event.id])).toEqual([
      [0, c1.id],
      [1, c2.id],
      [3, late.id],
    ])
    expect(plan.events[0]!.event.data).toMatchObject({
      emailId: 'email_a',
      recipient: 'ann@x.test',
      url: 'https://x.test/',
    })
    expect(plan.emails).toEqual([
      { id: 'email_a', opened_at: null, first_clicked_at: '2026-01-01T10:01:00.000Z' },
    ])
  })

  it('records nothing for an email that no longer exists', () => {
    const plan = planHits([hit('open', 'email_gone', '2026-01-01T10:00:00Z')], emails(email('email_a')))
    expect(plan).toEqual({ emails: [], events: [] })
  })
})
