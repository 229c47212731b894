import { baseEnv, envBool, envInt, parseEnv, SHUTDOWN_RESERVE_SECONDS } from '@mailer/config'
import { checkLinksEnv, linksEnvFields } from '@mailer/links'
import { z } from 'zod'

/**
 * Seconds a stopping dispatcher keeps after the longest wait for a relay's answer (the final dot's,
 * SMTP_DATA_TIMEOUT_SECONDS): 10 to record
 * the last outcomes (with their retries on a database hiccup, about 8 s), and the reserve the
 * drain leaves at the end of SHUTDOWN_TIMEOUT_SECONDS for closing connections. The chart's
 * `mailer.drainSeconds` uses the same number.
 */
export const DRAIN_MARGIN_SECONDS = 10 + SHUTDOWN_RESERVE_SECONDS

/** Seconds that may be fractional, so tests can run a whole retry schedule in moments. */
const seconds = (dflt: number, min = 0, max = 7 * 24 * 3600) =>
  z.coerce.number().min(min).max(max).default(dflt)

export const dispatcherEnv = baseEnv
  .extend({
    /** The relay: `smtp://user:pass@host:port` (STARTTLS when offered) or `smtps://…` (TLS from the start). */
    SMTP_URL: z
      .string()
      .url()
      .refine((u) => /^smtps?:\/\//.test(u), 'must be an smtp:// or smtps:// URL')
      .optional(),
    /**
     * For `smtp://`: `offered` upgrades with STARTTLS whenever the relay offers it, and does not
     * log in (credentials in SMTP_URL) to one that does not; `required` refuses such a relay in any
     * case (no mail or password in clear); `never` stays plain, login included (a relay in the same
     * pod or host). `smtps://` is TLS from the first byte whatever this says.
     */
    SMTP_STARTTLS: z.enum(['offered', 'required', 'never']).default('offered'),
    /**
     * `false` accepts any certificate from the relay (a self-signed one on an internal relay):
     * still encrypted, no longer authenticated. Prefer NODE_EXTRA_CA_CERTS with its CA.
     */
    SMTP_TLS_VERIFY: envBool(true),
    /** `file` writes `<MAIL_OUTBOX_DIR>/<emailId>.eml` instead of sending (the development default). */
    MAIL_TRANSPORT: z.enum(['smtp', 'file']).default('file'),
    MAIL_OUTBOX_DIR: z.string().min(1).default('.data/outbox'),
    /**
     * Emails this replica works on at once (claim, render, send, record). Each spends most of its
     * time waiting (the database, the relay), so it takes many to keep a core busy: end to end
     * 822-894 -> 913-949 emails/s going from 32 to 64, with 32 relay connections (bench/README.md).
     */
    DISPATCH_CONCURRENCY: envInt(64, 1, 1_000),
    /**
     * How long JetStream waits for an ack before redelivering, and so how old a `sending` claim
     * must be before another replica takes it over (its dispatcher died mid-send): how long a
     * killed dispatcher's emails wait. A live one keeps both with heartbeats (every third of it),
     * however long the relay takes, and writes a message's final dot only while its claim has a
     * third of it left without any refresh (ClaimKeeper.holds): a dispatcher cut off from the
     * database, or paused, gives its sends up rather than race a takeover.
     */
    // At most 300: claims are refreshed every third of it, and the email service's lost-dispatch
    // sweep queues again a `sending` email whose claim is older than DISPATCH_RECOVERY_SECONDS (150
    // at least), so a longer wait let it take a live dispatcher's email from under it.
    DISPATCH_ACK_WAIT_SECONDS: seconds(30, 2, 300),
    /** Messages handed out but not yet acked, across all replicas (JetStream max_ack_pending). */
    DISPATCH_MAX_ACK_PENDING: envInt(1_000, 1, 100_000),
    /**
     * Pooled connections to the relay per replica, each sending one message at a time (two round
     * trips with PIPELINING), so sends in flight need connections: half of DISPATCH_CONCURRENCY
     * (bench/README.md). Lower it for a relay that limits connections per client.
     */
    SMTP_POOL_SIZE: envInt(32, 1, 100),
    /** Connect, greeting and socket-inactivity time-out for the relay, and the longest wait for each whole reply but the final dot's. */
    SMTP_TIMEOUT_SECONDS: seconds(30, 0.1, 600),
    /**
     * The longest wait for the relay's answer to a message's final dot: the 10 minutes of RFC 5321
     * 4.5.3.2.6, since a relay may scan the message (a content filter before its queue) before it
     * answers. The relay may have the message by then: with SMTP_TIMEOUT_SECONDS's 30 s we recorded
     * a failure and sent it again on every retry. At least SMTP_TIMEOUT_SECONDS (raised to it).
     */
    SMTP_DATA_TIMEOUT_SECONDS: seconds(600, 0.1, 3_600),
    /** The relay said its sending quota is used up (the "platform daily limit"): wait this long. */
    PLATFORM_LIMIT_RETRY_SECONDS: seconds(3_600),
    /** Transient failures wait min(2^n × base, max) with jitter, n = 0 for the first retry. */
    RETRY_BASE_SECONDS: seconds(15),
    RETRY_MAX_SECONDS: seconds(3_600),
    /** Retries after the first attempt before an email is `failed` (platform-limit retries count). */
    MAX_RETRIES: envInt(8, 0, 100),
    /** Circuit breaker around the relay: how long it stays open before letting a probe through. */
    BREAKER_RESET_SECONDS: seconds(30, 0.1, 3_600),
    /** Relay calls in the rolling 10 s window before the breaker may open (at more than 50 % failures). */
    BREAKER_MIN_CALLS: envInt(5, 1, 10_000),
    /** PUBLIC_URL and TRACKING_SECRET: open pixels and click links in tracked emails. */
    ...linksEnvFields,
  })
  .superRefine((env, ctx) => {
    checkLinksEnv(env, ctx)
    if (env.MAIL_TRANSPORT === 'smtp' && !env.SMTP_URL) {
      ctx.addIssue({ code: 'custom', path: ['SMTP_URL'], message: 'is required when MAIL_TRANSPORT=smtp' })
    }
    // No bound between the relay's time-outs (SMTP_TIMEOUT_SECONDS, SMTP_DATA_TIMEOUT_SECONDS) and
    // DISPATCH_ACK_WAIT_SECONDS (there was one: twice the time-out at most): a send longer than the
    // ack wait (10 minutes for a dot's answer) keeps its claim and message by refreshing them, and
    // no final dot goes out on a claim that could be stale before a third of the ack wait, so the
    // relay's waits, however long, never let two replicas send the same email while refreshes
    // succeed (docs/api.md, "At-least-once, and the duplicate window").
  })
  // The drain outlasts the answer to a final dot: a stopping dispatcher gives up the sends whose
  // dot has not gone out (the relay discards them), but one waiting for the answer to its dot must
  // get it, or the email stays `sending`, is taken over and sent again while the relay may have
  // accepted it (a rollout's duplicate: 25 s of drain against a 30 s answer). So
  // SHUTDOWN_TIMEOUT_SECONDS is raised to SMTP_DATA_TIMEOUT_SECONDS plus the margin (613 s by
  // default) rather than refused: the shared default of 25 s stays right for every other service,
  // and a dispatcher whose sends are answered drains in moments whatever its bound.
  .overwrite((env) => {
    const dataTimeout = Math.max(env.SMTP_DATA_TIMEOUT_SECONDS, env.SMTP_TIMEOUT_SECONDS)
    return {
      ...env,
      SMTP_DATA_TIMEOUT_SECONDS: dataTimeout,
      SHUTDOWN_TIMEOUT_SECONDS: Math.max(
        env.SHUTDOWN_TIMEOUT_SECONDS,
        Math.ceil(dataTimeout) + DRAIN_MARGIN_SECONDS,
      ),
    }
  })
export type DispatcherEnv = z.infer<typeof dispatcherEnv>
export const loadEnv = (source: Record<string, string | undefined> = process.env): DispatcherEnv =>
  parseEnv(dispatcherEnv, source)
