import {
  consume,
  ensureConsumer,
  ensureStream,
  type RunningConsumer,
  type Runtime,
  secondsToNanos,
} from '@mailer/bus'
import { CONSUMERS, EVENT_TYPES, type EventMessage, readEventsMessage, STREAMS } from '@mailer/contracts'
import { matchingWebhooks } from '../domain/matching.js'
import type { WebhookEnv } from '../env.js'
import type { DeliveryStore } from '../infra/delivery-store.js'
import type { DeliveryWorker } from '../infra/delivery-worker.js'
import type { WebhookCache } from '../infra/webhook-cache.js'

const WEBHOOK_TYPES = new Set<string>(EVENT_TYPES)

/**
 * EVENTS stream → one pending delivery per matching enabled webhook of each event's project
 * (multi-row inserts, idempotent per (webhook, event)), then ack and kick the worker so the
 * first attempts go out at once. A message carries one event or a group of them; a malformed one
 * is terminated; a failed insert is retried (the whole message: the inserts already made are
 * no-ops the second time).
 */
export async function startFanout(
  rt: Runtime<WebhookEnv>,
  cache: WebhookCache,
  store: DeliveryStore,
  worker: DeliveryWorker,
): Promise<RunningConsumer> {
  await ensureStream(rt.bus, STREAMS.EVENTS)
  await ensureConsumer(rt.bus, STREAMS.EVENTS.name, CONSUMERS.webhookFanout, {
    ack_wait: secondsToNanos(rt.env.WEBHOOK_FANOUT_ACK_WAIT_SECONDS),
  })

  async function fanOut(m: EventMessage): Promise<number> {
    // Timeline-only types (email.test) never reach a webhook.
    if (!WEBHOOK_TYPES.has(m.event.type)) return 0
    const targets = matchingWebhooks(await cache.forProject(m.projectId), m.event)
    if (targets.length === 0) return 0
    return store.insertForEvent(
      m.projectId,
      m.event,
      targets.map((t) => t.id),
    )
  }

  return consume(rt.bus, {
    stream: STREAMS.EVENTS.name,
    durable: CONSUMERS.webhookFanout,
    concurrency: rt.env.WEBHOOK_FANOUT_CONCURRENCY,
    logger: rt.logger,
    metrics: rt.metrics,
    handle: async (msg) => {
      let read: ReturnType<typeof readEventsMessage>
      try {
        read = readEventsMessage(msg.json())
      } catch (err) {
        read = { invalid: String(err) }
      }
      if ('invalid' in read) {
        rt.logger.error(
          { reason: read.invalid, subject: msg.subject, seq: msg.seq },
          'malformed event message terminated',
        )
        msg.term()
        return
      }
      // The group's other events still go out (readEventsMessage).
      if (read.rejected.length > 0)
        rt.logger.error(
          { reasons: read.rejected, subject: msg.subject, seq: msg.seq },
          'malformed events left out of a group',
        )
      const events = read.events
      // Concurrent inserts are combined into one statement by the store (group commit).
      const inserted = await Promise.all(events.map((m) => fanOut(m)))
      if (inserted.some((n) => n > 0)) worker.kick()
      msg.ack()
    },
  })
}
