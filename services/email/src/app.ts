import { ensureStream, Outbox, type Runtime, startRuntime } from '@mailer/bus'
import { DomainsInvalidation, STREAMS, SUBJECTS } from '@mailer/contracts'
import { setTemplateLogger } from '@mailer/templating'
import type { TemplateRenderer } from './domain/template.js'
import type { EmailEnv } from './env.js'
import { serveAdminEmails } from './handlers/admin-emails.js'
import { serveAdminStats } from './handlers/admin-stats.js'
import { serveAllowance } from './handlers/allowance.js'
import { serveDevEvents } from './handlers/dev-events.js'
import { serveDomains } from './handlers/domains.js'
import { serveEmails } from './handlers/emails.js'
import { serveMailerRpc } from './handlers/rpc.js'
import { serveSend } from './handlers/send.js'
import { serveSuppressions } from './handlers/suppressions.js'
import { serveTemplates } from './handlers/templates.js'
import { startTracking } from './handlers/tracking.js'
import { DomainCache } from './infra/domain-cache.js'
import { startDueSweeper } from './infra/due-sweeper.js'
import { startEmailPruner } from './infra/email-pruner.js'
import { startHousekeeping } from './infra/housekeeping.js'
import { startLostDispatchSweep } from './infra/lost-dispatch.js'
import { EmailMetrics } from './infra/metrics.js'
import { startStatsRefresher } from './infra/stats-rollup.js'
import { TemplateCache } from './infra/template-renderer.js'
import { TemplateStore } from './infra/template-store.js'

export const SERVICE = 'email'

export type OutboxRows = Awaited<ReturnType<Outbox['write']>>

/** What the email service's handlers and background loops share. */
export interface EmailContext {
  rt: Runtime<EmailEnv>
  outbox: Outbox
  /** Publishes committed outbox rows without holding up the reply; the sweeper covers failures. */
  publish: (rows: OutboxRows) => void
  domains: DomainCache
  templates: TemplateRenderer
  metrics: EmailMetrics
}

/**
 * Starts the email service: the accept side (send, batch, list, read, cancel, reschedule), the due
 * sweeper for scheduled emails and retries, content retention, domains and suppressions, and the
 * opens and clicks of the TRACKING stream.
 */
export async function start(
  env: EmailEnv,
  opts: { templates?: TemplateRenderer } = {},
): Promise<Runtime<EmailEnv>> {
  if (env.TEST_SKIP_OUTBOX_PUBLISH && env.NODE_ENV !== 'test')
    throw new Error('TEST_SKIP_OUTBOX_PUBLISH needs NODE_ENV=test')
  const rt = await startRuntime(SERVICE, env)
  setTemplateLogger(rt.logger)
  await ensureStream(rt.bus, STREAMS.EMAILS)
  await ensureStream(rt.bus, STREAMS.EVENTS)

  const outbox = new Outbox(rt.db, rt.bus, rt.logger, rt.metrics)
  const skipPublish = env.TEST_SKIP_OUTBOX_PUBLISH
  if (!skipPublish) {
    outbox.start()
    rt.onStop(() => outbox.stop())
  }
  const domains = new DomainCache(rt.db, env.DOMAIN_CACHE_TTL_SECONDS * 1000)
  rt.bus.subscribeInvalidations(SUBJECTS.domainsInvalidate, {
    onMessage: (p) => domains.invalidate(DomainsInvalidation.parse(p).projectId),
    onMissed: () => domains.clear(),
  })

  const templateCache = new TemplateCache(new TemplateStore(rt.db), env.TEMPLATE_CACHE_TTL_SECONDS * 1000)
  const ctx: EmailContext = {
    rt,
    outbox,
    publish: (rows) => {
      if (!skipPublish && rows.length > 0) void outbox.publish(rows)
    },
    domains,
    templates: opts.templates ?? templateCache,
    metrics: new EmailMetrics(rt.metrics),
  }

  // --- register handlers: one line per route group ---
  serveSend(ctx)
  serveAllowance(ctx)
  serveEmails(ctx)
  serveDomains(rt, env)
  serveSuppressions(rt)
  serveTemplates(ctx, templateCache)
  serveAdminEmails(ctx)
  serveAdminStats(ctx)
  serveDevEvents(ctx)
  // MailerRpc runs the send and email route handlers above, so it is registered after them.
  serveMailerRpc(ctx)
  // --- end of handlers ---
  // Opens and clicks from the TRACKING stream; stopped before the outbox that announces them.
  const tracking = await startTracking(ctx)
  rt.onStop(() => tracking.stop())

  const loops = [
    startDueSweeper(ctx),
    startHousekeeping(ctx),
    startLostDispatchSweep(ctx),
    startEmailPruner(ctx),
    startStatsRefresher(ctx),
  ].filter((l) => l !== null)
  rt.onStop(() => Promise.all(loops.map((l) => l.stop())).then(() => undefined))
  // Subscriptions must reach the server before we report ready.
  await rt.bus.flush()
  rt.started()
  rt.logger.info({ rateLimit: env.RATE_LIMIT, ratePeriod: env.RATE_PERIOD }, 'email service ready')
  return rt
}
