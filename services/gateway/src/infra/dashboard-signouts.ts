import type { Bus } from '@mailer/bus'
import { SignoutMessage, SUBJECTS } from '@mailer/contracts'
import type { Db } from '@mailer/db'
import { every, type Logger, type Loop } from '@mailer/observability'
import type { RevokedSessions } from '../dashboard/session.js'

/** How often a replica whose sign-outs are not all known tries to read them again. */
const RETRY_MS = 5_000
/**
 * How often a replica reads them again anyway: an announcement sent by a replica that was itself
 * away from NATS waits in its buffer until it is back, and is lost if it never comes back.
 */
const REFRESH_MS = 60_000
/** How often the sign-outs past their session's expiry are deleted. */
const PRUNE_MS = 3_600_000

/**
 * Dashboard sign-outs in PostgreSQL (`dashboard_signouts`), kept until the session would have
 * expired: what a replica started after a sign-out, or disconnected from NATS when it was
 * announced, reads to know it.
 */
export class DashboardSignouts {
  constructor(private readonly db: Db) {}

  /**
   * Written before the sign-out is announced, so a replica that misses the announcement finds it.
   * Without PostgreSQL this throws, and the sign-out is 503 (http/errors.ts).
   */
  async record(sid: string, expiresAt: number): Promise<void> {
    await this.db.dashboardSignout.createMany({
      data: [{ sessionId: sid, expiresAt: new Date(expiresAt * 1000) }],
      skipDuplicates: true,
    })
  }

  async unexpired(): Promise<Array<{ sid: string; expiresAt: number }>> {
    const rows = await this.db.dashboardSignout.findMany({
      where: { expiresAt: { gt: new Date() } },
      select: { sessionId: true, expiresAt: true },
    })
    return rows.map((r) => ({ sid: r.sessionId, expiresAt: Math.floor(r.expiresAt.getTime() / 1000) }))
  }

  /** Deletes the sign-outs whose session has expired anyway; returns how many. */
  async prune(): Promise<number> {
    const { count } = await this.db.dashboardSignout.deleteMany({ where: { expiresAt: { lte: new Date() } } })
    return count
  }
}

/**
 * Keeps `revoked` complete: hears the sign-outs other replicas announce, reads them at start
 * (before the gateway serves), again after each NATS reconnect (the announcements sent meanwhile
 * are lost) and every minute, retrying every few seconds while PostgreSQL does not answer, and
 * deletes the expired rows every hour. Every replica runs it: the reads change nothing and the
 * delete is idempotent. The NATS subscription is made before the first read, so a sign-out is
 * either in what a load reads or announced after it. A read is one small indexed query; requests
 * never read the table.
 */
export async function startSignoutSync(
  store: DashboardSignouts,
  revoked: RevokedSessions,
  bus: Bus,
  logger: Logger,
): Promise<Loop> {
  let loadedAt = 0
  const load = async () => {
    const ticket = revoked.beginLoad()
    const started = Date.now()
    revoked.loaded(ticket, await store.unexpired())
    loadedAt = started
  }
  const tryLoad = () =>
    load().catch((err) =>
      logger.warn({ err }, 'could not read the dashboard sign-outs; sessions answer 503 until they are'),
    )
  // Every replica forgets a signed-out session at once, not only the one that handled the sign-out
  // (one that misses this reads it from the database).
  bus.subscribeInvalidations(SUBJECTS.dashboardSignout, {
    onMessage: (payload) => {
      const m = SignoutMessage.safeParse(payload)
      if (m.success) revoked.add(m.data.sid, m.data.expiresAt)
    },
    onMissed: () => {
      revoked.invalidate()
      void tryLoad()
    },
  })
  await tryLoad()
  const reload = every(RETRY_MS, 'dashboard-signouts-reload', logger, async () => {
    if (!revoked.complete || Date.now() - loadedAt >= REFRESH_MS) await load()
  })
  const prune = every(PRUNE_MS, 'dashboard-signouts-prune', logger, async () => {
    const n = await store.prune()
    if (n > 0) logger.info({ deleted: n }, 'pruned expired dashboard sign-outs')
  })
  return {
    async stop() {
      await Promise.all([reload.stop(), prune.stop()])
    },
  }
}
