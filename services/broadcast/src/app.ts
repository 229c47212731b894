import { type Runtime, startRuntime } from '@mailer/bus'
import { type Links, linksFromEnv } from '@mailer/links'
import { setTemplateLogger } from '@mailer/templating'
import type { BroadcastEnv } from './env.js'
import { serveAudiences } from './handlers/audiences.js'
import { serveBroadcasts } from './handlers/broadcasts.js'
import { serveContacts } from './handlers/contacts.js'
import { serveUnsubscribe } from './handlers/unsubscribe.js'
import { ChunkSender } from './infra/chunk-sender.js'
import { EmailClient } from './infra/email-client.js'
import { BroadcastMetrics } from './infra/metrics.js'
import { startSenderLoop } from './infra/sender-loop.js'
import { SenderStore } from './infra/sender-store.js'

export const SERVICE = 'broadcast'

/** What the broadcast service's handlers and its sending loop share. */
export interface BroadcastContext {
  rt: Runtime<BroadcastEnv>
  client: EmailClient
  links: Links
  metrics: BroadcastMetrics
}

/**
 * Starts the broadcast service: contacts, audiences and broadcasts over the route catalog, the
 * one-click unsubscribe subject, and the loop that sends due broadcasts through the email service.
 */
export async function start(env: BroadcastEnv): Promise<Runtime<BroadcastEnv>> {
  const links = linksFromEnv(env)
  const rt = await startRuntime(SERVICE, env)
  setTemplateLogger(rt.logger)
  const store = new SenderStore(rt.db)
  const ctx: BroadcastContext = {
    rt,
    client: new EmailClient(rt.bus, env.BROADCAST_SEND_TIMEOUT_MS),
    links,
    metrics: new BroadcastMetrics(rt.metrics, store, rt.logger),
  }

  serveContacts(ctx)
  serveAudiences(ctx)
  serveBroadcasts(ctx)
  serveUnsubscribe(ctx)

  const leaseMs = env.BROADCAST_LEASE_SECONDS * 1000
  const chunks = new ChunkSender({
    store,
    client: ctx.client,
    links,
    metrics: ctx.metrics,
    logger: rt.logger,
    chunkSize: env.BROADCAST_CHUNK_SIZE,
    leaseMs,
    resumeMs: env.BROADCAST_RESUME_SECONDS * 1000,
  })
  const loop = startSenderLoop(
    { store, chunks, bus: rt.bus, logger: rt.logger },
    { pollMs: env.BROADCAST_POLL_MS, concurrency: env.BROADCAST_CONCURRENCY, leaseMs },
  )
  rt.onStop(() => loop.stop())
  // Subscriptions must reach the server before we report ready.
  await rt.bus.flush()
  rt.started()
  return rt
}
