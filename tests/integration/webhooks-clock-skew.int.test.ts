import { CONSUMERS } from '@mailer/contracts'
import { waitFor } from '@mailer/testing'
import { connect, type NatsConnection } from 'nats'
import { describe, expect, it } from 'vitest'
import { email } from '../support/emails.js'
import { Seeder } from '../support/seed.js'
import { useStack } from '../support/use-stack.js'
import { EventPublisher, makeEvent, projectWithReceiver, type Receiver } from '../support/webhooks.js'

// A webhook's createdAt comes from the webhook service's clock, an event's from the clock of the
// service that recorded it. Pods on different nodes disagree a little: a user who creates a webhook
// and sends at once must still get the email's events when the email service's clock runs behind.
let seed: Seeder
let events: EventPublisher
let nc: NatsConnection
const receivers: Receiver[] = []
const DOMAIN = 'mail.skew.test'
const { te, stack, client } = useStack(['auth', 'email', 'webhook', 'gateway'], {
  testEnv: { WEBHOOK_ALLOW_PRIVATE: 'true' },
  before: async () => {
    seed = await Seeder.open(te)
    events = await EventPublisher.connect(te)
    nc = await connect({ servers: te.natsUrl })
  },
  after: () => Promise.all([seed.close(), events.close(), nc.close(), ...receivers.map((r) => r.close())]),
})

/** True once the webhook service's fan-out has handled (acked) every event on the stream. */
async function fanoutDrained(): Promise<boolean> {
  const jsm = await nc.jetstreamManager()
  const info = await jsm.consumers.info(
    `${te.natsPrefix.toUpperCase()}_EVENTS`,
    `${te.natsPrefix}-${CONSUMERS.webhookFanout}`,
  )
  return info.num_pending === 0 && info.num_ack_pending === 0
}

describe('clock skew between the webhook service and the services that record events', () => {
  it('delivers an event stamped 1 s before its webhook, and still none from long before it', async () => {
    const { receiver, p, wh, projectId } = await projectWithReceiver(client, 'skew', receivers)
    await seed.domain(projectId, DOMAIN)

    // The fan-out waits while the email is accepted, so that the webhook's stored creation time can
    // then be put exactly 1 s after the email.queued event's: what a webhook service whose clock
    // runs 1 s ahead of the email service's stores when the send follows the create at once.
    await stack.stop('webhook')
    const sent = await client.post('/v1/emails', p.live, email(`Skew <hi@${DOMAIN}>`))
    expect(sent.status).toBe(202)
    const [queued] = await seed.sql<{ id: string; createdAt: string }>(
      `SELECT payload->>'id' AS id, payload->>'createdAt' AS "createdAt"
       FROM email_events WHERE email_id = $1 AND type = 'email.queued'`,
      [sent.body.id],
    )
    const whCreatedAt = Date.parse(queued!.createdAt) + 1_000
    await seed.sql('UPDATE webhooks SET created_at = $2 WHERE id = $1', [
      wh.id,
      new Date(whCreatedAt).toISOString(),
    ])
    // An event of 6 s before the webhook is older than any clock skew: the webhook never gets it.
    const stale = makeEvent('email.delivered', { createdAt: new Date(whCreatedAt - 6_000).toISOString() })
    await events.publish(projectId, stale)

    await stack.start('webhook')
    const got = await waitFor(() => receiver.requests.find((r) => r.body?.id === queued!.id), {
      timeoutMs: 30_000,
      what: 'the email.queued event at the receiver',
    })
    expect(got.body).toMatchObject({ type: 'email.queued', createdAt: queued!.createdAt })
    expect(Date.parse(got.body.createdAt)).toBeLessThan(
      Date.parse((await client.get(`/v1/webhooks/${wh.id}`, p.live)).body.createdAt),
    )
    await waitFor(fanoutDrained, { timeoutMs: 30_000, what: 'the fan-out to handle every event' })
    const rows = await seed.sql<{ event_id: string }>(
      'SELECT event_id FROM webhook_deliveries WHERE webhook_id = $1',
      [wh.id],
    )
    expect(rows.map((r) => r.event_id)).toEqual([queued!.id])
    expect(receiver.requests.some((r) => r.body?.id === stale.id)).toBe(false)
  }, 90_000)
})
