import type { TestEnv } from '@mailer/testing'
import { waitFor } from '@mailer/testing'
import { connect, type JetStreamClient, type NatsConnection } from 'nats'

/** Builders for analytics tests: events as the pipeline publishes them, and count maps. */
let seq = 0
export const evtId = () => `evt_TEST${String(++seq).padStart(22, '0')}`

export interface Ev {
  id: string
  type: string
  createdAt: string
  data: Record<string, unknown>
}

export function ev(
  type: string,
  emailId: string,
  recipient: string | null,
  at: Date,
  extra: Record<string, unknown> = {},
  tags: Record<string, string> = {},
): Ev {
  return {
    id: evtId(),
    type,
    createdAt: at.toISOString(),
    data: { emailId, recipient, from: 'app@alpha.test', subject: 'Hi', tags, ...extra },
  }
}

export const delivery = (ms: number) => ({
  delivery: { status: 'delivered', provider: 'smtp', deliveryTimeMs: ms, smtpStatusCode: 250 },
  terminal: true,
})

export const counts = (over: Record<string, number> = {}) => ({
  sent: 0,
  delivered: 0,
  deferred: 0,
  bounced: 0,
  complained: 0,
  rejected: 0,
  failed: 0,
  opened: 0,
  clicked: 0,
  ...over,
})

/** Publishes straight to the prefixed EVENTS stream, as the outbox does (msgID = event id unless told). */
export async function publishEvent(te: TestEnv, js: JetStreamClient, projectId: string, e: Ev, msgID = e.id) {
  const ack = await js.publish(`${te.natsPrefix}.events.${e.type}`, JSON.stringify({ projectId, event: e }), {
    msgID,
  })
  if (ack.duplicate) throw new Error(`event ${e.id} was taken for a duplicate`)
}

/** Publishes events of any projects as one group message (`events.group`), as hot paths write them. */
export async function publishEventGroup(
  te: TestEnv,
  js: JetStreamClient,
  events: Array<{ projectId: string; event: Ev }>,
) {
  const ack = await js.publish(`${te.natsPrefix}.events.group`, JSON.stringify({ events }), {
    msgID: `g:${events[0]!.event.id}`,
  })
  if (ack.duplicate) throw new Error(`group ${events[0]!.event.id} was taken for a duplicate`)
}

/** Waits until the analytics consumer has taken and acknowledged everything published. */
export async function analyticsDrained(te: TestEnv, nc: NatsConnection): Promise<void> {
  const jsm = await nc.jetstreamManager()
  await waitFor(
    async () => {
      const i = await jsm.consumers.info(
        `${te.natsPrefix.toUpperCase()}_EVENTS`,
        `${te.natsPrefix}-analytics-ingest`,
      )
      return i.num_pending === 0 && i.num_ack_pending === 0 && i.delivered.stream_seq > 0
    },
    { timeoutMs: 15_000, what: 'the analytics consumer to catch up' },
  )
}

/**
 * The services analytics tests run: auth and the gateway for projects and the routes, analytics
 * consuming the EVENTS stream.
 */
export const ANALYTICS_SERVICES = ['auth', 'gateway', 'analytics'] as const

/** A NATS connection to publish events as the pipeline does. */
export async function connectEvents(te: TestEnv) {
  const nc: NatsConnection = await connect({ servers: te.natsUrl })
  return { nc, js: nc.jetstream() }
}
