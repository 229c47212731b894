import { heartbeatEveryMs, type Runtime, secondsToNanos, startRuntime } from '@mailer/bus'
import { LeaseKeeper } from '@mailer/db'
import { type Links, linksFromEnv } from '@mailer/links'
import { setTemplateLogger } from '@mailer/templating'
import type { BroadcastEnv } from './env.js'
import { serveAudiences } from './handlers/audiences.js'
import { serveBroadcasts } from './handlers/broadcasts.js'
import { serveContacts } from './handlers/contacts.js'
import { serveUnsubscribe } from './handlers/unsubscribe.js'
import { ChunkSender } from './infra/chunk-sender.js'
import { startCountRefresher } from './infra/count-refresher.js'
import { CountStore } from './infra/count-store.js'
import { EmailClient } from './infra/email-client.js'
import { BroadcastMetrics } from './infra/metrics.js'
import { startSenderLoop } from './infra/sender-loop.js'
import { type ClaimedBroadcast, SenderStore } from './infra/sender-store.js'

export const SERVICE = 'broadcast'

/** What the broadcast service's handlers and its sending loop share. */
export interface BroadcastContext {
  rt: Runtime<BroadcastEnv>
  client: EmailClient
  links: Links
  metrics: BroadcastMetrics
}

/** A recount's lease beyond the query timeout that bounds it (DATABASE_QUERY_TIMEOUT_MS=0: a minute). */
const RECOUNT_LEASE_MARGIN_MS = 5_000

/**
 * Starts the broadcast service: contacts, audiences and broadcasts over the route catalog, the
 * one-click unsubscribe subject, the loop that sends due broadcasts through the email service,
 * and the one that keeps their stored email counts fresh.
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
  // Renewed every third of the lease while a replica works the broadcast: a chunk may take longer
  // than the lease, and a killed replica's broadcast continues one lease after its last renewal.
  const leases = new LeaseKeeper<ClaimedBroadcast>({
    leaseMs,
    everyMs: heartbeatEveryMs(secondsToNanos(env.BROADCAST_LEASE_SECONDS)),
    renew: (bs, ms) => store.renew(bs, ms),
    onError: (err) => {
      if (!rt.bus.nc.isClosed()) rt.logger.warn({ err }, 'renewing broadcast leases failed; will retry')
    },
    onLost: (b) =>
      rt.logger.info({ broadcastId: b.id }, 'broadcast lease lost; left to whoever holds it now'),
  })
  const counts = new CountStore(rt.db)
  const schedule = {
    refreshMs: env.BROADCAST_COUNTS_REFRESH_MS,
    recentMs: env.BROADCAST_COUNTS_RECENT_SECONDS * 1000,
    maxMs: env.BROADCAST_COUNTS_MAX_INTERVAL_SECONDS * 1000,
  }
  const chunks = new ChunkSender({
    store,
    leases,
    counts,
    countRefreshMs: schedule.refreshMs,
    client: ctx.client,
    links,
    metrics: ctx.metrics,
    logger: rt.logger,
    chunkSize: env.BROADCAST_CHUNK_SIZE,
    leaseMs,
    resumeMs: env.BROADCAST_RESUME_SECONDS * 1000,
    maxMessageBytes: env.MAX_MESSAGE_BYTES,
  })
  const loop = startSenderLoop(
    { store, chunks, leases, bus: rt.bus, logger: rt.logger },
    { pollMs: env.BROADCAST_POLL_MS, concurrency: env.BROADCAST_CONCURRENCY, leaseMs },
  )
  rt.onStop(() => loop.stop())
  const refresher = startCountRefresher(
    { store: counts, bus: rt.bus, logger: rt.logger },
    {
      pollMs: Math.min(env.BROADCAST_POLL_MS, schedule.refreshMs),
      leaseMs: (env.DATABASE_QUERY_TIMEOUT_MS || 60_000) + RECOUNT_LEASE_MARGIN_MS,
      schedule,
    },
  )
  rt.onStop(() => refresher.stop())
  // Subscriptions must reach the server before we report ready.
  await rt.bus.flush()
  rt.started()
  return rt
}
