import { baseEnv, envInt, parseEnv } from '@mailer/config'
import { checkLinksEnv, linksEnvFields } from '@mailer/links'
import { z } from 'zod'

/** Seconds that may be fractional, so tests can pause and resume in moments. */
const seconds = (dflt: number, min: number, max: number) => z.coerce.number().min(min).max(max).default(dflt)

export const broadcastEnv = baseEnv
  .extend({
    ...linksEnvFields,
    /** A broadcast that hit a rate or daily limit continues this long after (interface.md: five minutes). */
    BROADCAST_RESUME_SECONDS: seconds(300, 0.1, 86_400),
    /** Contacts sent per batch request to the email service (the batch limit is 100). */
    BROADCAST_CHUNK_SIZE: envInt(100, 1, 100),
    /** How often each replica looks for broadcasts that are due. */
    BROADCAST_POLL_MS: envInt(1_000, 10, 60_000),
    /**
     * The lease of a claimed broadcast. Its replica renews it every third of this while it works
     * the broadcast, however long a chunk takes; a replica that died mid-send gives it up at most
     * this long after its last renewal.
     */
    BROADCAST_LEASE_SECONDS: seconds(15, 1, 3_600),
    /** Broadcasts one replica sends at once. */
    BROADCAST_CONCURRENCY: envInt(4, 1, 100),
    /** Wait for the email service to accept one chunk. */
    BROADCAST_SEND_TIMEOUT_MS: envInt(30_000, 1_000, 300_000),
    /**
     * How often the stored email counts of a broadcast that is sending, paused or finished less
     * than BROADCAST_COUNTS_RECENT_SECONDS ago are recounted: what list and get answer lags by up
     * to this (the dashboard polls every few seconds). Each recount reads one broadcast's emails.
     */
    BROADCAST_COUNTS_REFRESH_MS: envInt(5_000, 10, 3_600_000),
    /** How long after it finished (sent or canceled) a broadcast's counts stay on the refresh interval. */
    BROADCAST_COUNTS_RECENT_SECONDS: seconds(3_600, 0, 30 * 86_400),
    /**
     * Past that, a broadcast's counts are recounted at a tenth of its age (bounces and complaints
     * still come), at most this far apart.
     */
    BROADCAST_COUNTS_MAX_INTERVAL_SECONDS: seconds(86_400, 1, 30 * 86_400),
    /**
     * The email service's limit on one email's html + text (same setting, same default): a
     * contact whose email renders larger is skipped before anything is held for its chunk.
     */
    MAX_MESSAGE_BYTES: envInt(10 * 1024 * 1024, 1024),
  })
  .superRefine(checkLinksEnv)
export type BroadcastEnv = z.infer<typeof broadcastEnv>
export const loadEnv = (source: Record<string, string | undefined> = process.env): BroadcastEnv =>
  parseEnv(broadcastEnv, source)
