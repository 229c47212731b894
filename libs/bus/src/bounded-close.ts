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
 * The waits one shutdown spends on the database: work in hand, then each pool's close. Each may
 * take DB_CLOSE_TIMEOUT_MS while the database answers; the first that waits that long in vain
 * shows that it does not, and ends the waits still running and every later one at once. Waited
 * one after the other, a service's pools and work against a hung database took 5 s each (the
 * webhook service's three waits 15 s, past a SHUTDOWN_TIMEOUT_SECONDS of 15, which then exited 1
 * without draining NATS), where the first wait already said all there was to know.
 */
export class DbWaits {
  private hung = false
  private readonly gaveUp: Promise<false>
  private markHung!: () => void

  constructor(private readonly ms = DB_CLOSE_TIMEOUT_MS) {
    this.gaveUp = new Promise<false>((resolve) => {
      this.markHung = () => resolve(false)
    })
  }

  /** The database did not answer one of the waits: the later ones do not wait for it. */
  get databaseHung(): boolean {
    return this.hung
  }

  /**
   * True when `p` settles (either way) in time, false when it does not. `capMs` shortens this
   * wait alone (the shutdown's own deadline is near). Never rejects.
   */
  async within(p: Promise<unknown>, capMs = this.ms): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined
    // Once the database is known not to answer, a wait still gets a turn of the event loop: what
    // has already ended (or ends without the database) is reported as ended.
    const ms = this.hung ? 0 : Math.max(0, Math.min(capMs, this.ms))
    const expired = new Promise<false>((resolve) => {
      timer = setTimeout(() => {
        if (ms === this.ms) {
          this.hung = true
          this.markHung()
        }
        resolve(false)
      }, ms)
    })
    try {
      return await Promise.race([
        p.then(
          () => true as const,
          () => true as const,
        ),
        expired,
        this.gaveUp,
      ])
    } finally {
      clearTimeout(timer)
    }
  }
}

/**
 * Waits for `close` (a pool's `end()`, Prisma's `$disconnect()`) at most as long as `waits` lets
 * it (DB_CLOSE_TIMEOUT_MS, shared with the shutdown's other database waits), then logs and
 * returns so the rest of the shutdown runs; a failure is logged too, never thrown. What is left
 * open goes with the process.
 */
export async function closeWithin(
  what: string,
  close: () => Promise<unknown>,
  logger: Logger,
  waits: DbWaits = new DbWaits(),
  capMs?: number,
): Promise<void> {
  let failure: { err: unknown } | undefined
  const closing = Promise.resolve()
    .then(close)
    .catch((err: unknown) => {
      failure = { err }
    })
  if (!(await waits.within(closing, capMs)))
    logger.warn({ what }, 'database did not close in time; leaving it open')
  else if (failure) logger.warn({ err: failure.err, what }, 'database close failed')
}
