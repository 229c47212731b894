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
     * The email service's limit on one email's html + text (same setting, same default): a
     * contact whose email renders larger is skipped before anything is held for its chunk.
     */
    MAX_MESSAGE_BYTES: envInt(10 * 1024 * 1024, 1024),
  })
  .superRefine(checkLinksEnv)
export type BroadcastEnv = z.infer<typeof broadcastEnv>
export const loadEnv = (source: Record<string, string | undefined> = process.env): BroadcastEnv =>
  parseEnv(broadcastEnv, source)
