import { baseEnv, envBool, envInt, listScanEnvFields, parseEnv } from '@mailer/config'
import { linksEnvFields } from '@mailer/links'
import { z } from 'zod'
import { dnsEnvFields } from './infra/dns-env.js'

export const emailEnv = baseEnv.extend({
  /** Live emails a project may send per RATE_PERIOD seconds, shared by every replica. */
  RATE_LIMIT: envInt(300, 1),
  RATE_PERIOD: envInt(60).refine((v) => v === 10 || v === 60, 'must be 10 or 60'),
  /**
   * Share of RATE_LIMIT that broadcast emails may use (0 < share ≤ 1); the rest is always left
   * for transactional sends.
   */
  BROADCAST_RATE_SHARE: z.coerce.number().gt(0).max(1).default(0.5),
  /** Days an email's content (html, text, attachments) is kept after it was accepted or is due. */
  CONTENT_RETENTION_DAYS: envInt(30, 1, 3650),
  /**
   * Days an email that has reached a final status is kept after it was accepted (or was due, if
   * scheduled later), with its recipients, content and events; then it is deleted (GET answers 404 `email_not_found`, its
   * idempotency key is free again). 0 keeps emails for good.
   */
  EMAIL_RETENTION_DAYS: envInt(0, 0, 3650),
  /** How often the emails past EMAIL_RETENTION_DAYS are deleted. */
  EMAIL_PRUNE_INTERVAL_SECONDS: envInt(3600, 1, 86_400),
  /**
   * How often GET /v1/admin/stats' counts (email_status_hours) are recomputed for the current and
   * previous hour: how far behind the counts of new emails and their status changes can be.
   */
  STATS_REFRESH_SECONDS: envInt(60, 1, 3600),
  /**
   * How often every hour of the stats' 31 days is recomputed, one statement an hour: a status that
   * changes days after the email was sent (a bounce, a complaint) shows in the counts by then.
   */
  STATS_FULL_REFRESH_SECONDS: envInt(3600, 1, 86_400),
  /**
   * Hours of emails one statement of the full stats refresh reads (31 days: 124 statements at 6).
   * Lower it if a statement nears DATABASE_QUERY_TIMEOUT_MS (about a second per million emails).
   */
  STATS_REFRESH_CHUNK_HOURS: envInt(6, 1, 24),
  /** html + text + decoded attachments of one email, at most (with its tracking links). */
  MAX_MESSAGE_BYTES: envInt(10 * 1024 * 1024, 1024),
  /**
   * The dispatcher's PUBLIC_URL: the size limit counts the tracking links it writes into tracked
   * emails, which start with it (the tracking secret is not needed to know their length).
   */
  PUBLIC_URL: linksEnvFields.PUBLIC_URL,
  /** Upper bound on how long a project's sender domains are served from memory if an invalidation is lost. */
  DOMAIN_CACHE_TTL_SECONDS: envInt(30, 1, 3600),
  /** Upper bound on how long a compiled template is served from memory if an invalidation is lost. */
  TEMPLATE_CACHE_TTL_SECONDS: envInt(60, 1, 3600),
  /**
   * A queued email queued this long before every dispatch message the dispatchers have not yet
   * acknowledged has lost its own (a purged or restored stream, an older pod that could not read
   * it) and gets a new one. Longer than JetStream's 2-minute duplicate window.
   */
  DISPATCH_RECOVERY_SECONDS: envInt(300, 150, 30 * 86_400),
  /**
   * JetStream ack wait of the TRACKING consumer: how long the opens and clicks a crashed replica
   * had pulled wait before another replica records them. Hits in hand are kept by heartbeats
   * however long their write takes, so it only has to outlast a crash's detection, not the work.
   */
  TRACKING_ACK_WAIT_SECONDS: envInt(10, 1, 3600),
  ...listScanEnvFields,
  ...dnsEnvFields,
  /** `true` serves POST /v1/admin/dev/events (fake delivery events); else it is 404 route_not_found. */
  DEV_ROUTES: envBool(false),
  /**
   * Test hook (NODE_ENV=test only): never publish from the outbox, as if the process died right
   * after each commit; a fresh instance's sweeper must publish what it left behind.
   */
  TEST_SKIP_OUTBOX_PUBLISH: envBool(false),
})
export type EmailEnv = z.infer<typeof emailEnv>
export const loadEnv = (source: Record<string, string | undefined> = process.env): EmailEnv =>
  parseEnv(emailEnv, source)
