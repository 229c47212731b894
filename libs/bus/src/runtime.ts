import { type BaseEnv, ConfigError, natsTls, parseNatsUrl, SHUTDOWN_RESERVE_SECONDS } from '@mailer/config'
import { createDb, type Db } from '@mailer/db'
import { createLogger, type Logger, Metrics, type OpsServer, startOpsServer } from '@mailer/observability'
import { closeWithin, DbWaits } from './bounded-close.js'
import { Bus } from './bus.js'
import { DependencyWatch } from './dependency-gauges.js'

/** What every service process holds: config, logs, metrics, NATS, PostgreSQL, ops endpoints. */
export interface Runtime<E extends BaseEnv = BaseEnv> {
  service: string
  env: E
  logger: Logger
  metrics: Metrics
  bus: Bus
  db: Db
  ops: OpsServer
  /**
   * The service is wired (handlers subscribed, consumers pulling): from now on /readyz follows
   * NATS and PostgreSQL (NATS alone with `readyWithoutDb`). Before it /readyz is 503, so a
   * rollout never counts a pod that does not serve yet.
   */
  started(): void
  /**
   * The shutdown's waits on the database (work in hand, pools closing): steps wait through it, so
   * that against a database that does not answer they give up together after one
   * DB_CLOSE_TIMEOUT_MS rather than one after the other.
   */
  dbWaits: DbWaits
  /** Registers a step for shutdown; steps run in reverse order of registration. */
  onStop(step: () => Promise<void> | void): void
  /**
   * Drain: readiness goes red, request handlers stop taking work and finish what they hold, the
   * registered steps run, NATS drains, connections close. Ends within SHUTDOWN_TIMEOUT_SECONDS
   * (shutdownPlan): what has not finished by the drain's deadline is cut off.
   */
  stop(): Promise<void>
  /** Crash simulation for tests: close connections without draining. */
  kill(): Promise<void>
  /**
   * PostgreSQL answered a ping within DB_PING_TIMEOUT_MS (the check /readyz and the dependency
   * gauges share): an endpoint reporting the database never waits on a hung one.
   */
  checkDb(): Promise<boolean>
}

/**
 * How a shutdown spends SHUTDOWN_TIMEOUT_SECONDS: the drain may take all but a reserve (3 s, or a
 * quarter of a shorter timeout), kept for cutting off what has not finished (NATS closed, so
 * JetStream redelivers the messages in hand) and closing the database before onShutdown's exit
 * timer, set to the same SHUTDOWN_TIMEOUT_SECONDS, ends the process with 1. The drain's deadline
 * used to be that timer's: the timer fired first, and the process exited 1 without closing NATS,
 * whatever was in flight left for the ack wait. `closeByMs`: the database's close ends by then.
 */
export function shutdownPlan(timeoutSeconds: number): { drainMs: number; closeByMs: number } {
  const totalMs = timeoutSeconds * 1000
  const reserveMs = Math.min(SHUTDOWN_RESERVE_SECONDS * 1000, totalMs / 4)
  return { drainMs: totalMs - reserveMs, closeByMs: totalMs - reserveMs / 3 }
}

export async function startRuntime<E extends BaseEnv>(
  service: string,
  env: E,
  opts: {
    dbPoolSize?: number
    /**
     * /readyz follows NATS alone (the gateway): see `ready` below. The database stays in the
     * dependency gauges and in /health.
     */
    readyWithoutDb?: boolean
  } = {},
): Promise<Runtime<E>> {
  const logger = createLogger({ service, level: env.LOG_LEVEL })
  const metrics = new Metrics(service)
  const db = createDb(env.DATABASE_URL, {
    poolSize: opts.dbPoolSize ?? 10,
    queryTimeoutMs: env.DATABASE_QUERY_TIMEOUT_MS,
  })
  // The ops server comes first: while NATS cannot be reached at start (it is starting too, or it
  // is down) the process waits for it with /livez green and /readyz red, instead of crashing
  // into a restart loop whose back-off outlasts the outage.
  let bus: Bus | undefined
  let wired = false
  let stopped = false
  const deps = new DependencyWatch(
    db,
    metrics,
    () => bus?.isConnected === true,
    () => wired && !stopped,
  )
  const ops = await startOpsServer({
    port: env.METRICS_PORT,
    registry: metrics.registry,
    logger,
    // NATS reconnects on its own: readiness follows the connection (red during an outage, green
    // again after), while /livez stays green so the pod is not restarted for it. A service whose
    // pods take traffic from a Kubernetes Service and answer a database outage themselves (the
    // gateway: 503 contract errors, tracking links that wait on the stream) leaves the database
    // out: every replica shares it, so it would take them all out of the endpoints at once, and
    // the ingress would answer its own 503 page instead.
    ready: async () =>
      wired && bus?.isConnected === true && (opts.readyWithoutDb === true || (await deps.checkDb())),
  })
  // Why the last try failed (a timeout, a refused connection), for the operator waiting on it.
  let lastFailure: unknown
  const waiting = setInterval(
    () =>
      logger.warn(
        {
          servers: parseNatsUrl(env.NATS_URL).servers,
          reason: lastFailure instanceof Error ? lastFailure.message : String(lastFailure ?? ''),
        },
        'NATS cannot be reached yet; retrying',
      ),
    10_000,
  )
  const tls = natsTls(env)
  try {
    bus = await Bus.connect({
      url: env.NATS_URL,
      prefix: env.NATS_PREFIX,
      name: service,
      ...(env.NATS_STREAM_REPLICAS ? { streamReplicas: env.NATS_STREAM_REPLICAS } : {}),
      ...(tls ? { tls } : {}),
      onWait: (err) => {
        lastFailure = err
      },
      logger,
      metrics,
    })
  } catch (err) {
    // A refused login or a TLS setting the server does not agree with is a setting to fix, not an
    // outage to wait out: exit 78 naming it (startOrExit), never the credentials.
    if (err instanceof ConfigError) {
      deps.stop()
      await ops.close()
      await closeWithin('prisma', () => db.$disconnect(), logger)
    }
    throw err
  } finally {
    clearInterval(waiting)
  }
  const connected = bus
  const steps: Array<() => Promise<void> | void> = []
  const dbWaits = new DbWaits()
  const rt: Runtime<E> = {
    service,
    env,
    logger,
    metrics,
    bus: connected,
    db,
    ops,
    dbWaits,
    started: () => {
      wired = true
    },
    checkDb: () => deps.checkDb(),
    onStop: (step) => {
      steps.push(step)
    },
    async stop() {
      if (stopped) return
      stopped = true
      const began = Date.now()
      const plan = shutdownPlan(env.SHUTDOWN_TIMEOUT_SECONDS)
      // The drain closes NATS on purpose: the dependency gauges keep what they last saw.
      deps.stop()
      ops.markDraining()
      const drain = (async () => {
        await connected.stopServing()
        for (const step of [...steps].reverse()) {
          try {
            await step()
          } catch (err) {
            logger.warn({ err }, 'shutdown step failed')
          }
        }
        await connected.drain()
      })()
      // A drain is bounded: whatever has not finished by then is cut off (JetStream redelivers
      // unacked work, and state is in PostgreSQL), so a stuck handler never blocks a shutdown.
      let timer: NodeJS.Timeout | undefined
      const deadline = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), plan.drainMs)
      })
      if ((await Promise.race([drain.then(() => 'drained' as const), deadline])) === 'timeout') {
        logger.error({ seconds: plan.drainMs / 1000 }, 'drain did not finish in time; closing connections')
        await connected.close().catch(() => undefined)
      }
      clearTimeout(timer)
      await closeWithin(
        'prisma',
        () => db.$disconnect(),
        logger,
        dbWaits,
        began + plan.closeByMs - Date.now(),
      )
      await ops.close()
    },
    async kill() {
      stopped = true
      deps.stop()
      await connected.close()
      await closeWithin('prisma', () => db.$disconnect(), logger)
      await ops.close()
    },
  }
  logger.info({ metricsPort: ops.port, natsPrefix: env.NATS_PREFIX || undefined }, `${service} started`)
  return rt
}
