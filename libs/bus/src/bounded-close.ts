import type { Logger } from '@mailer/observability'

/**
 * How long shutdown waits for a database pool to close, or for work in hand on the database to
 * end. A pool closes once its queries have ended: against a database that keeps the TCP
 * connection open and answers nothing, that is never, and the pod would wait for the kubelet's
 * SIGKILL instead of finishing its shutdown.
 */
export const DB_CLOSE_TIMEOUT_MS = 5_000

/** True when `p` settles (either way) within `ms`, false once `ms` has passed. Never rejects. */
export async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const gaveUp = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms)
  })
  try {
    return await Promise.race([
      p.then(
        () => true as const,
        () => true as const,
      ),
      gaveUp,
    ])
  } finally {
    clearTimeout(timer)
  }
}

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
  let failure: { err: unknown } | undefined
  const closing = Promise.resolve()
    .then(close)
    .catch((err: unknown) => {
      failure = { err }
    })
  if (!(await settlesWithin(closing, ms)))
    logger.warn({ what, ms }, 'database did not close in time; leaving it open')
  else if (failure) logger.warn({ err: failure.err, what }, 'database close failed')
}
