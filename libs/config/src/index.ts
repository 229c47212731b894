import { z } from 'zod'
import { bool } from './env-bool.js'
import { type EnvIssue, natsTlsEnvFields, natsTlsIssues } from './nats-tls.js'
import { parseNatsUrl } from './nats-url.js'

export { type NatsTls, type NatsTlsEnv, natsTls, natsTlsIssues } from './nats-tls.js'
export { type NatsLogin, parseNatsUrl } from './nats-url.js'

export const envBool = (dflt: boolean) => bool.default(dflt)
export const envInt = (dflt: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(dflt)

/** Spread into the env schema of each service that answers filtered lists (email, webhook). */
export const listScanEnvFields = {
  /**
   * Rows a filtered list reads past its cursor at most per request (the email lists' `status`,
   * `from`, `q` and `tag`; the event lists' `type`, and a live caller's event list, which leaves
   * test-mode events out). A page not full by then is answered as it is, with a cursor that goes
   * on from there (docs/api.md, "Lists"), so a filter few rows match never reads a project's
   * whole history in one request.
   */
  LIST_SCAN_ROWS: envInt(20_000, 1, 10_000_000),
}

/** Settings every service reads (contract.md part 1). */
export const baseEnv = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATABASE_URL: z
    .string()
    .url()
    .refine((u) => /^postgres(ql)?:/.test(u), 'must be a postgres:// URL'),
  NATS_URL: z
    .string()
    .min(1)
    .default('nats://127.0.0.1:4222')
    .refine(
      // Read (and its login percent-decoded) when the services connect: a login that cannot be
      // decoded (a raw `%` in a password) crashed them with a URIError stack trace instead of
      // naming the setting. The message never echoes the value (it holds a password).
      (v) => {
        try {
          parseNatsUrl(v)
          return true
        } catch {
          return false
        }
      },
      'the login in it (user:password@ or token@) must be percent-encoded: write % as %25',
    ),
  /** Prefix for every subject, stream and consumer name (empty in production; tests isolate with it). */
  NATS_PREFIX: z
    .string()
    .regex(/^[a-z0-9_]*$/, 'lower-case letters, digits and _ only')
    .default(''),
  /**
   * Replicas of the EMAILS, EVENTS and TRACKING streams on a clustered NATS (1, 3 or 5). Unset: a
   * stream is created with 1 and a count changed by hand (`nats stream edit --replicas`) is kept;
   * set: every service start brings the streams to it.
   */
  NATS_STREAM_REPLICAS: z.coerce
    .number()
    .int()
    .refine((n) => n === 1 || n === 3 || n === 5, 'must be 1, 3 or 5')
    .optional(),
  ...natsTlsEnvFields,
  /**
   * Longest a single database statement may run (0: no limit): PostgreSQL cancels it, and a
   * server that does not answer at all is given up a second later, so a request caught on a hung
   * database fails as 503 `service_unavailable` instead of holding its handler (and a shutdown)
   * indefinitely. Statements, not transactions: retention pruning and imports work in chunks far
   * under it; migrations do not go through the services' connections.
   */
  DATABASE_QUERY_TIMEOUT_MS: envInt(15_000, 0, 3_600_000),
  METRICS_PORT: envInt(9464, 0, 65535),
  /**
   * Seconds a shutdown may take before the process exits anyway; the drain's deadline comes
   * SHUTDOWN_RESERVE_SECONDS earlier, so that what it cuts off is closed within it.
   */
  SHUTDOWN_TIMEOUT_SECONDS: envInt(25, 1, 600),
})
export type BaseEnv = z.infer<typeof baseEnv>

/**
 * Of SHUTDOWN_TIMEOUT_SECONDS, what is kept after the drain's deadline (at most a quarter of it)
 * to close NATS and the database before the process exits (libs/bus shutdownPlan).
 */
export const SHUTDOWN_RESERVE_SECONDS = 3

export class ConfigError extends Error {
  constructor(
    readonly variables: string[],
    message: string,
  ) {
    super(message)
    this.name = 'ConfigError'
  }
}

/**
 * Parses the environment with a service's schema. A bad or missing value throws a
 * ConfigError whose message names every offending variable.
 */
export function parseEnv<S extends z.ZodType>(
  schema: S,
  source: NodeJS.ProcessEnv | Record<string, string | undefined>,
): z.infer<S> {
  // Empty strings mean "unset", as in most deployment tools.
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''))
  const res = schema.safeParse(cleaned)
  const issues = res.success
    ? sharedChecks(res.data).map((i) => ({ ...i, where: i.variable }))
    : res.error.issues.map((i) => ({
        variable: String(i.path[0] ?? ''),
        where: i.path.join('.') || '(env)',
        message: i.message,
      }))
  if (res.success && issues.length === 0) return res.data
  const lines = issues.map((i) => `  ${i.where}: ${i.message}`)
  throw new ConfigError(
    issues.map((i) => i.variable),
    `Invalid configuration:\n${lines.join('\n')}`,
  )
}

/**
 * Checks across baseEnv's settings, run on every service's parsed env: the services extend
 * baseEnv, and zod cannot extend an object schema that carries refinements, so they live here.
 */
function sharedChecks(env: unknown): EnvIssue[] {
  const e = env as Partial<BaseEnv>
  return typeof e.NATS_URL === 'string' ? natsTlsIssues({ ...e, NATS_URL: e.NATS_URL }) : []
}

/**
 * For `main.ts`: starts the service; a configuration problem found only once it connects (the
 * NATS server refusing NATS_URL's login) is printed and the process exits 78 (EX_CONFIG), like one
 * found by the env schema, rather than with an unhandled rejection's stack trace. SIGTERM or
 * SIGINT before it has started exits 0; from then on the service's own shutdown (onShutdown) drains.
 */
export async function startOrExit<T>(start: () => Promise<T>): Promise<T> {
  // A stop asked for while starting (a rollout of a pod still waiting for NATS): nothing has been
  // taken yet, so there is nothing to drain; said and exited 0 instead of dying of the signal.
  let starting = true
  const early = (signal: NodeJS.Signals) => {
    if (!starting) return // the service's own shutdown handler has it
    process.stderr.write(
      `${JSON.stringify({ level: 'info', time: Date.now(), signal, msg: 'stopped while starting: nothing to drain' })}\n`,
    )
    process.exit(0)
  }
  process.on('SIGTERM', early)
  process.on('SIGINT', early)
  try {
    return await start()
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`)
      process.exit(78)
    }
    throw e
  } finally {
    starting = false
    // Removed only once main.ts has put its shutdown handler in place (right after this returns):
    // with no listener left in between, Node closes the signal's handle, and a signal it had
    // caught but not yet delivered was dropped (a `make dev` stop that never came).
    setImmediate(() => {
      process.off('SIGTERM', early)
      process.off('SIGINT', early)
    })
  }
}

/** For `main.ts`: parse or print the problem and exit 78 (EX_CONFIG). */
export function loadEnvOrExit<S extends z.ZodType>(
  schema: S,
  source: NodeJS.ProcessEnv = process.env,
): z.infer<S> {
  try {
    return parseEnv(schema, source)
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`)
      process.exit(78)
    }
    throw e
  }
}
