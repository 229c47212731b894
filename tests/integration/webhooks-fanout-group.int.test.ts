import { waitFor } from '@mailer/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'
import { EventPublisher, makeEvent } from '../support/webhooks.js'

// A group message on the EVENTS stream holding one malformed event (a producer's bug, or versions
// out of step during a rollout): the group's other events still reach the webhooks.
const { te, client, receiver } = useStack(['auth', 'gateway', 'webhook'], {
  testEnv: { WEBHOOK_ALLOW_PRIVATE: 'true' },
  receiver: true,
  after: () => events.close(),
})
let events: EventPublisher

beforeAll(async () => {
  events = await EventPublisher.connect(te)
})

describe('a group message with a malformed event', () => {
  it('delivers the group’s valid events and leaves the malformed one out', async () => {
    const p = await createProject(client, 'group-malformed')
    expect((await client.post('/v1/webhooks', p.live, { url: receiver.url('/hook') })).status).toBe(201)
    const good = [makeEvent('email.sent'), makeEvent('email.delivered')]
    await events.publishGroup([
      { projectId: p.project.id, event: good[0]! },
      { projectId: p.project.id, event: null as any },
      { projectId: p.project.id, event: good[1]! },
    ])
    // Both valid events arrive: terminating the group would have dropped them with the bad one.
    await waitFor(() => receiver.requests.length >= 2 || null, {
      timeoutMs: 15_000,
      what: 'the group’s valid events at the receiver',
    })
    expect(receiver.requests.map((r) => r.body.id).sort()).toEqual(good.map((e) => e.id).sort())
  })
})
