import type { Logger } from '@mailer/observability'

/**
 * How long shutdown waits for a database pool to close. A pool closes once its queries have
 * ended: against a database that keeps the TCP connection open and answers nothing, that is
 * never, and the pod would wait for the kubelet's SIGKILL instead of finishing its shutdown.
 */
export const DB_CLOSE_TIMEOUT_MS = 5_000

/**
 * Waits for `close` (a pool's `end()`, Prisma's `$disconnect()`) at most `ms`, then logs and
 * returns so the rest of the shutdown runs; a failure is logged too, never thrown. What is left
 * open goes with the process.
 */
export async function closeWithin(
  what: string,
  close: () => Promise<unknown>,
  logger: Logger,
  ms = DB_CLOSE_TIMEOUT_MS,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const gaveUp = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms)
  })
  try {
    const outcome = await Promise.race([Promise.resolve().then(close), gaveUp])
    if (outcome === 'timeout') logger.warn({ what, ms }, 'database did not close in time; leaving it open')
  } catch (err) {
    logger.warn({ err, what }, 'database close failed')
  } finally {
    clearTimeout(timer)
  }
}
