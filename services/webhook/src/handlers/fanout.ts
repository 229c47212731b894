import { consume, ensureConsumer, ensureStream, type RunningConsumer, type Runtime } from '@mailer/bus'
import { CONSUMERS, EVENT_TYPES, EventMessage, STREAMS } from '@mailer/contracts'
import { matchingWebhooks } from '../domain/matching.js'
import type { WebhookEnv } from '../env.js'
import type { DeliveryStore } from '../infra/delivery-store.js'
import type { DeliveryWorker } from '../infra/delivery-worker.js'
import type { WebhookCache } from '../infra/webhook-cache.js'

const WEBHOOK_TYPES = new Set<string>(EVENT_TYPES)

/**
 * EVENTS stream → one pending delivery per matching enabled webhook of the event's project
 * (one multi-row insert, idempotent per (webhook, event)), then ack and kick the worker so the
 * first attempt goes out at once. A malformed message is terminated; a failed insert is retried.
 */
export async function startFanout(
  rt: Runtime<WebhookEnv>,
  cache: WebhookCache,
  store: DeliveryStore,
  worker: DeliveryWorker,
): Promise<RunningConsumer> {
  await ensureStream(rt.bus, STREAMS.EVENTS)
  await ensureConsumer(rt.bus, STREAMS.EVENTS.name, CONSUMERS.webhookFanout)
  return consume(rt.bus, {
    stream: STREAMS.EVENTS.name,
    durable: CONSUMERS.webhookFanout,
    concurrency: rt.env.WEBHOOK_FANOUT_CONCURRENCY,
    logger: rt.logger,
    metrics: rt.metrics,
    handle: async (msg) => {
      let m: EventMessage
      try {
        m = EventMessage.parse(msg.json())
      } catch (err) {
        rt.logger.error({ err, subject: msg.subject, seq: msg.seq }, 'malformed event message terminated')
        msg.term()
        return
      }
      // Timeline-only types (email.test) never reach a webhook.
      if (WEBHOOK_TYPES.has(m.event.type)) {
        const targets = matchingWebhooks(await cache.forProject(m.projectId), m.event)
        if (targets.length > 0) {
          const inserted = await store.insertForEvent(
            m.projectId,
            m.event,
            targets.map((t) => t.id),
          )
          if (inserted > 0) worker.kick()
        }
      }
      msg.ack()
    },
  })
}
