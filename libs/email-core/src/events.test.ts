import { describe, expect, it } from 'vitest'
import { buildEvent, eventMessage, timelineRow } from './events.js'

const email = {
  id: 'email_1',
  projectId: 'proj_1',
  mode: 'live',
  from: 'a@b.test',
  subject: 'Hi',
  tags: { t: 'v' },
}

describe('event rows', () => {
  it('puts every event on the timeline with its payload as webhooks receive it', () => {
    const event = buildEvent(email, {
      type: 'email.delivered',
      recipient: 'x@y.test',
      extra: { terminal: true },
    })
    expect(timelineRow(email, event)).toMatchObject({
      id: event.id,
      email_id: 'email_1',
      recipient: 'x@y.test',
      payload: event,
    })
    expect(event.data).toMatchObject({
      emailId: 'email_1',
      from: 'a@b.test',
      subject: 'Hi',
      tags: { t: 'v' },
      terminal: true,
    })
  })

  it('announces live events on events.<type>, never test-mode ones or email.test', () => {
    const live = buildEvent(email, { type: 'email.queued' })
    expect(eventMessage(email, live)).toEqual({
      subject: 'events.email.queued',
      msgId: live.id,
      payload: { projectId: 'proj_1', event: live },
    })
    expect(eventMessage(email, buildEvent(email, { type: 'email.test' }))).toBeNull()
    const test = { ...email, mode: 'test' }
    expect(eventMessage(test, buildEvent(test, { type: 'email.queued' }))).toBeNull()
  })
})
