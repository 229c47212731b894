import {
  closeWithin,
  consume,
  ensureConsumer,
  ensureStream,
  Outbox,
  type Runtime,
  secondsToNanos,
  shutdownPlan,
  startRuntime,
} from '@mailer/bus'
import { CONSUMERS, DomainsInvalidation, STREAMS, SUBJECTS } from '@mailer/contracts'
import { createPgPool } from '@mailer/db'
import { linksFromEnv } from '@mailer/links'
import type { DispatcherEnv } from './env.js'
import { makeDispatchHandler } from './handlers/dispatch.js'
import { DkimKeys } from './infra/dkim-keys.js'
import { FileRelay, type Relay, Renderer, SmtpRelay } from './infra/relay.js'

export const SERVICE = 'dispatcher'

/** Dispatch messages pulled ahead of the ones being handled (see `consume`). */
const DISPATCH_PREFETCH = 16

/**
 * Starts the dispatcher: consumes the EMAILS stream, renders each email to DKIM-signed MIME,
 * delivers it through the SMTP relay (or to `.eml` files) and records what happened.
 */
export async function start(env: DispatcherEnv): Promise<Runtime<DispatcherEnv>> {
  // Prisma serves the light work (DKIM keys, the outbox); the per-email SQL has its own pg pool below.
  const rt = await startRuntime(SERVICE, env, { dbPoolSize: 4 })
  await ensureStream(rt.bus, STREAMS.EMAILS)
  await ensureStream(rt.bus, STREAMS.EVENTS)
  await ensureConsumer(rt.bus, STREAMS.EMAILS.name, CONSUMERS.dispatcherSend, {
    ack_wait: secondsToNanos(env.DISPATCH_ACK_WAIT_SECONDS),
    max_ack_pending: env.DISPATCH_MAX_ACK_PENDING,
  })

  const relay: Relay =
    env.MAIL_TRANSPORT === 'smtp'
      ? new SmtpRelay(
          {
            url: env.SMTP_URL!,
            starttls: env.SMTP_STARTTLS,
            verifyTls: env.SMTP_TLS_VERIFY,
            poolSize: env.SMTP_POOL_SIZE,
            timeoutSeconds: env.SMTP_TIMEOUT_SECONDS,
            dataTimeoutSeconds: env.SMTP_DATA_TIMEOUT_SECONDS,
            breaker: { resetSeconds: env.BREAKER_RESET_SECONDS, minCalls: env.BREAKER_MIN_CALLS },
          },
          rt.metrics,
          rt.logger,
        )
      : new FileRelay(env.MAIL_OUTBOX_DIR)
  // Shutdown steps run in reverse: stop consuming (sends past their final dot get the relay's
  // answer and are recorded, the others are given back: dispatcher.stop() below), then flush the
  // outbox, then close the relay connections.
  rt.onStop(() => relay.close())
  const outbox = new Outbox(rt.db, rt.bus, rt.logger, rt.metrics)
  outbox.start()
  rt.onStop(() => outbox.stop())

  const dkim = new DkimKeys(rt.db)
  rt.bus.subscribeInvalidations(SUBJECTS.domainsInvalidate, {
    onMessage: (p) => dkim.invalidate(DomainsInvalidation.parse(p).projectId),
    onMissed: () => dkim.clear(),
  })

  // Claims and outcomes are group commits (two statements at a time each), plus an occasional claim
  // refresh for a slow send: a few connections serve any DISPATCH_CONCURRENCY. Closed after the
  // consumer stopped and in-flight outcomes were recorded.
  const pool = createPgPool(env.DATABASE_URL, { max: 8, queryTimeoutMs: env.DATABASE_QUERY_TIMEOUT_MS })
  rt.onStop(() => closeWithin('dispatcher pg pool', () => pool.end(), rt.logger, rt.dbWaits))
  const dispatcher = makeDispatchHandler({
    db: rt.db,
    pool,
    outbox,
    relay,
    renderer: new Renderer(),
    dkim,
    links: linksFromEnv(env),
    policy: {
      maxRetries: env.MAX_RETRIES,
      baseSeconds: env.RETRY_BASE_SECONDS,
      maxSeconds: env.RETRY_MAX_SECONDS,
      platformLimitSeconds: env.PLATFORM_LIMIT_RETRY_SECONDS,
    },
    concurrency: env.DISPATCH_CONCURRENCY,
    ackWaitSeconds: env.DISPATCH_ACK_WAIT_SECONDS,
    drainMs: shutdownPlan(env.SHUTDOWN_TIMEOUT_SECONDS).drainMs,
    logger: rt.logger,
    metrics: rt.metrics,
  })
  const consumer = await consume(rt.bus, {
    stream: STREAMS.EMAILS.name,
    durable: CONSUMERS.dispatcherSend,
    // Messages in flight; a message names one email or a group, and the handler's slots bound the
    // emails in flight to DISPATCH_CONCURRENCY whatever the mix. Few are pulled ahead: a message
    // may name 50 emails, and one buffered here is not another replica's.
    concurrency: env.DISPATCH_CONCURRENCY,
    prefetch: DISPATCH_PREFETCH,
    logger: rt.logger,
    metrics: rt.metrics,
    handle: dispatcher.handle,
  })
  // First step of a drain: no new claims, unsent messages given up and handed back, sends
  // waiting for the relay's answer to their final dot recorded (dispatcher.stop()).
  rt.onStop(async () => {
    dispatcher.stop()
    await consumer.stop()
  })
  rt.logger.info(
    {
      transport: relay.provider,
      concurrency: env.DISPATCH_CONCURRENCY,
      // At least SMTP_DATA_TIMEOUT_SECONDS plus a margin (env.ts), whatever SHUTDOWN_TIMEOUT_SECONDS said.
      drainSeconds: env.SHUTDOWN_TIMEOUT_SECONDS,
    },
    'dispatching emails',
  )
  // Subscriptions must reach the server before we report ready.
  await rt.bus.flush()
  rt.started()
  return rt
}
