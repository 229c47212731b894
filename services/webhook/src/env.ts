import { baseEnv, envBool, envInt, listScanEnvFields, parseEnv } from '@mailer/config'
import { WEBHOOK_RETRY_SCHEDULE_SECONDS } from '@mailer/contracts'
import { z } from 'zod'

/** `30,120,600` → [30, 120, 600]: waits in seconds after attempt 1, 2, 3, …; then `failed`. */
const retrySchedule = z
  .string()
  .regex(/^\s*\d+(\.\d+)?(\s*,\s*\d+(\.\d+)?)*\s*$/, 'a comma-separated list of seconds, e.g. 30,120,600')
  .transform((s) => s.split(',').map((v) => Number(v.trim())))
  .pipe(
    z
      .array(
        z
          .number()
          .positive()
          .max(7 * 24 * 3600),
      )
      .min(1)
      .max(50),
  )
  .default([...WEBHOOK_RETRY_SCHEDULE_SECONDS])

export const webhookEnv = baseEnv.extend({
  /** Allow webhook URLs whose host is loopback, link-local or private (development and tests). */
  WEBHOOK_ALLOW_PRIVATE: envBool(false),
  WEBHOOK_RETRY_SCHEDULE_SECONDS: retrySchedule,
  /** A receiver must answer 2xx within this time. */
  WEBHOOK_TIMEOUT_MS: envInt(10_000, 100, 120_000),
  /** How often the delivery worker looks for due retries (new deliveries are sent at once). */
  WEBHOOK_POLL_MS: envInt(1_000, 50, 60_000),
  /** Attempts in flight in this replica, and per webhook. */
  WEBHOOK_CONCURRENCY: envInt(64, 1, 2_000),
  WEBHOOK_ENDPOINT_CONCURRENCY: envInt(4, 1, 100),
  /**
   * Deliveries per webhook claimed ahead of a free slot (leased, held in memory): fewer claims
   * under load. Their leases (15 s) are renewed while they wait, as are those of the attempts in
   * flight, so a crashed replica's claims are taken over about 15 s after it died, whatever this is.
   */
  WEBHOOK_PREFETCH: envInt(12, 0, 1_000),
  /** JetStream events handled at once by this replica. */
  WEBHOOK_FANOUT_CONCURRENCY: envInt(16, 1, 512),
  /**
   * JetStream ack wait of the fan-out consumer: how long the events a crashed replica had pulled
   * wait before another replica fans them out. Events being fanned out are kept by heartbeats
   * however long that takes, so it only has to outlast a crash's detection, not the work.
   */
  WEBHOOK_FANOUT_ACK_WAIT_SECONDS: envInt(10, 1, 3600),
  /** Upper bound on how long a project's webhook list is served from memory if an invalidation is lost. */
  WEBHOOK_CACHE_TTL_SECONDS: envInt(300, 1, 86_400),
  /**
   * How long finished deliveries (and the event payloads only they need) are kept. At least 8
   * days: longer than the EVENTS stream's 7-day age limit, so that an event still in the stream
   * always finds its deliveries and is never delivered twice.
   */
  WEBHOOK_DELIVERY_RETENTION_DAYS: envInt(30, 8, 3650),
  /**
   * How often the deliveries older than the retention are deleted, and the deliveries a stopped
   * replica left of webhooks disabled (pending ones) or deleted are ended (also at start).
   */
  WEBHOOK_PRUNE_INTERVAL_SECONDS: envInt(3600, 1, 86_400),
  /**
   * How long disabling or deleting a webhook waits for its deliveries to be failed or deleted
   * before it answers; a larger backlog's rest goes on in the background. At most 8 s: the whole
   * request must fit the gateway's UPSTREAM_TIMEOUT_MS (10 s by default), or the caller gets 503
   * for a change that was made.
   */
  WEBHOOK_CLEANUP_WAIT_MS: envInt(2_000, 0, 8_000),
  ...listScanEnvFields,
})
export type WebhookEnv = z.infer<typeof webhookEnv>
export const loadEnv = (source: Record<string, string | undefined> = process.env): WebhookEnv =>
  parseEnv(webhookEnv, source)
