import { baseEnv, envBool, envInt, parseEnv } from '@mailer/config'
import { checkLinksEnv, linksEnvFields } from '@mailer/links'
import { z } from 'zod'

/**
 * The shortest admin key the gateway starts with: 24 random characters are 130 bits or more, out of
 * reach of any guessing rate; the chart and `make dev` generate longer ones.
 */
export const ADMIN_KEY_MIN_CHARS = 24

export const gatewayEnv = baseEnv
  .extend({
    PORT: envInt(3000, 0, 65535),
    /**
     * The operator's admin key; without it every admin call fails with 401 invalid_api_key. Spaces
     * and line breaks around it are dropped: a Secret made from a file keeps the file's final
     * newline, which no Authorization header can carry, so no admin call could ever have matched.
     * At least ADMIN_KEY_MIN_CHARS characters: it is taken as a Bearer key on the admin routes at
     * whatever rate a client sends (only the dashboard's sign-in counts tries), so its length is
     * what keeps it from being guessed.
     */
    ADMIN_API_KEY: z
      .string()
      .trim()
      .min(1, 'must not be blank')
      .refine(
        (k) => [...k].length >= ADMIN_KEY_MIN_CHARS,
        `must be at least ${ADMIN_KEY_MIN_CHARS} characters (a random one: openssl rand -base64 32)`,
      )
      .optional(),
    MAX_BODY_BYTES: envInt(16 * 1024 * 1024, 1024),
    /** How long a request waits for the auth service before answering 503. */
    AUTH_TIMEOUT_MS: envInt(1_500, 100, 60_000),
    /**
     * How long past its 5-second cache a key this gateway verified is still taken while the auth
     * service cannot be reached at all (no replica, or none answering within AUTH_TIMEOUT_MS), so
     * that an auth restart does not stop sending for keys in use. Never when auth answers (a
     * revoked key is refused as ever). 0 answers 503 as soon as the cache entry is out of date.
     */
    AUTH_STALE_GRACE_SECONDS: envInt(300, 0, 3600),
    /**
     * How long the request line and headers may take to arrive, and the longest a request body
     * may pause, before 408 request_timeout (docs/operations.md). Not a limit on a whole upload:
     * one that keeps sending is read to the end (Node's 300 s for a whole request still holds).
     */
    REQUEST_READ_TIMEOUT_SECONDS: envInt(30, 1, 300),
    /** How long a request waits for the owning service before answering 503. */
    UPSTREAM_TIMEOUT_MS: envInt(10_000, 100, 120_000),
    /**
     * How many proxies (the ingress, a load balancer before it) stand in front of the gateway and
     * append to X-Forwarded-For: the client's address is the entry that many from the right, and
     * X-Forwarded-Proto/Host are honoured. `true`/`yes` mean 1, `false`/`no` 0. A count, not
     * "trust everything": with that, the address was the leftmost entry, which the client writes
     * itself, so the dashboard's sign-in limiter could be dodged by changing it on every try.
     */
    TRUST_PROXY: z
      .string()
      .default('1')
      .transform((v) => ({ true: '1', yes: '1', false: '0', no: '0' })[v.toLowerCase()] ?? v)
      .pipe(z.string().regex(/^([0-9]|10)$/, 'must be true, false or a number of proxies from 0 to 10'))
      .transform(Number),
    /** Serve the operator dashboard at /dashboard (sign-in with ADMIN_API_KEY). */
    DASHBOARD_ENABLED: envBool(true),
    /** The built dashboard (`index.html` and `assets/`); default services/gateway/dashboard/dist. */
    DASHBOARD_DIR: z.string().min(1).optional(),
    /** How long a dashboard sign-in lasts. */
    DASHBOARD_SESSION_HOURS: envInt(8, 1, 168),
    /**
     * The dashboard cookies' `Secure` flag. `auto`: when the browser came over https as the gateway
     * can tell (its own TLS, or X-Forwarded-Proto from a trusted proxy). `true` (yes, 1): always,
     * for TLS that ends before a proxy which sends no X-Forwarded-Proto, or with TRUST_PROXY=0,
     * where `auto` would send the session cookie without it. `false` (no, 0): never.
     */
    DASHBOARD_COOKIE_SECURE: z
      .string()
      .default('auto')
      .transform(
        (v) => ({ yes: 'true', '1': 'true', no: 'false', '0': 'false' })[v.toLowerCase()] ?? v.toLowerCase(),
      )
      .pipe(z.enum(['auto', 'true', 'false'], 'must be auto, true or false')),
    /**
     * Extra origins (comma-separated, `https://ops.example.com`) allowed to make dashboard writes,
     * for an ingress that rewrites Host without sending X-Forwarded-Host.
     */
    DASHBOARD_ALLOWED_ORIGINS: z
      .string()
      .default('')
      .transform((s) =>
        s
          .split(',')
          .map((o) => o.trim())
          .filter(Boolean),
      )
      .pipe(z.array(z.url({ protocol: /^https?$/ }))),
    /** PUBLIC_URL and TRACKING_SECRET: the public tracking and unsubscribe links. */
    ...linksEnvFields,
  })
  .superRefine(checkLinksEnv)
export type GatewayEnv = z.infer<typeof gatewayEnv>
export const loadEnv = (source: Record<string, string | undefined> = process.env): GatewayEnv =>
  parseEnv(gatewayEnv, source)
