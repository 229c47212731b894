import type { Db } from '@mailer/db'
import { every, type Logger, type Loop } from '@mailer/observability'

/** Failed sign-ins a client may make in one window before it is locked out until the window ends. */
export const SIGNIN_MAX_FAILURES = 10
export const SIGNIN_WINDOW_SECONDS = 5 * 60
/** How often the rows whose window has ended are deleted (each replica; the delete is idempotent). */
const PRUNE_MS = 5 * 60_000

export type SigninAttempt = { allowed: true } | { allowed: false; retryAfterSeconds: number }

/**
 * Dashboard sign-in attempts per client (`dashboard_signin_failures`; an IPv4 address or an IPv6
 * /64, as domain/signin-client.ts names it, which the caller passes), shared by every
 * gateway replica and kept through restarts: the admin key is chosen by the operator (24
 * characters at least: env.ts), so guessing it through the sign-in page is slowed to
 * SIGNIN_MAX_FAILURES per window (which starts at the first failure and is not extended by later
 * ones).
 */
export class DashboardSignins {
  constructor(
    private readonly db: Db,
    private readonly max = SIGNIN_MAX_FAILURES,
    private readonly windowSeconds = SIGNIN_WINDOW_SECONDS,
  ) {}

  /**
   * Counts an attempt before the key is compared, in one upsert: a check followed by a count after
   * the comparison would let a burst of concurrent guesses all pass the check. The client is
   * refused once the attempts before this one reached the limit; a right key then clears the count
   * (`succeeded`), so what stays counted is the failures. Kept at max + 1 while locked out. The
   * database's clock alone decides windows, so replicas whose clocks differ agree.
   */
  async attempt(client: string): Promise<SigninAttempt> {
    // Without PostgreSQL this throws, and the sign-in is 503 (http/errors.ts), never unlimited.
    const rows = await this.db.$queryRaw<Array<{ attempts: number; wait: number }>>`
        INSERT INTO dashboard_signin_failures AS f (address, attempts, window_ends_at)
        VALUES (${client}, 1, now() + make_interval(secs => ${this.windowSeconds}::int))
        ON CONFLICT (address) DO UPDATE SET
          attempts = CASE WHEN f.window_ends_at <= now() THEN 1
                          ELSE LEAST(f.attempts + 1, ${this.max}::int + 1) END,
          window_ends_at = CASE WHEN f.window_ends_at <= now() THEN EXCLUDED.window_ends_at
                                ELSE f.window_ends_at END
        RETURNING attempts, ceil(extract(epoch FROM window_ends_at - now()))::int AS wait`
    const row = rows[0]!
    if (row.attempts <= this.max) return { allowed: true }
    return { allowed: false, retryAfterSeconds: Math.max(1, row.wait) }
  }

  /** The right key: the client starts again from zero, as before the window. */
  async succeeded(client: string): Promise<void> {
    await this.db.dashboardSigninFailure.deleteMany({ where: { address: client } })
  }

  /**
   * Deletes the rows whose window has ended (they count for nothing); returns how many. By the
   * database's clock, as `attempt` decides: a replica's clock ahead would end windows early.
   */
  prune(): Promise<number> {
    return this.db.$executeRaw`DELETE FROM dashboard_signin_failures WHERE window_ends_at <= now()`
  }
}

/** Deletes the expired rows every few minutes, so clients that stopped trying leave no trace. */
export function startSigninPrune(store: DashboardSignins, logger: Logger): Loop {
  return every(PRUNE_MS, 'dashboard-signins-prune', logger, async () => {
    const n = await store.prune()
    if (n > 0) logger.info({ deleted: n }, 'pruned expired dashboard sign-in failures')
  })
}
