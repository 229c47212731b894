import type { Logger } from 'pino'

/**
 * SIGTERM/SIGINT: run `stop` (which drains: stop taking work, finish what is in flight, close
 * connections) and exit 0; exit 1 if it fails or takes longer than `timeoutSeconds`, which should
 * be a little under the pod's terminationGracePeriodSeconds. `stop` must end before this timer
 * with a margin (the runtime's drain cuts off at SHUTDOWN_TIMEOUT_SECONDS less a reserve,
 * shutdownPlan in libs/bus): this exit is for a stop that is itself stuck.
 */
export function onShutdown(stop: () => Promise<void>, logger: Logger, timeoutSeconds = 25): void {
  let stopping = false
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'shutting down: draining')
    const timer = setTimeout(() => {
      logger.error({ timeoutSeconds }, 'drain took too long, exiting')
      process.exit(1)
    }, timeoutSeconds * 1000)
    timer.unref()
    stop().then(
      () => {
        logger.info('drained, exiting')
        process.exit(0)
      },
      (err) => {
        logger.error({ err }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', handle)
  process.on('SIGINT', handle)
}
