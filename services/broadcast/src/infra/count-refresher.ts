import type { Bus } from '@mailer/bus'
import { every, type Logger } from '@mailer/observability'
import { type CountSchedule, nextCountInMs } from '../domain/count-schedule.js'
import type { CountStore } from './count-store.js'

export interface CountRefresherOptions {
  /** How often each replica looks for broadcasts whose counts are due. */
  pollMs: number
  /**
   * How long a claimed recount is this replica's: past the longest a recount may run (the query
   * timeout), so no other replica recounts it meanwhile; a failed recount is tried again then.
   */
  leaseMs: number
  schedule: CountSchedule
}

/**
 * Broadcasts that never had a row (marked sent by an older replica during a rolling upgrade) are
 * looked for at start and this often: a pass over the broadcasts table, so not at every poll.
 */
export const ADOPT_EVERY_MS = 5 * 60_000

/**
 * The background recount of broadcasts' stored email counts, on one replica. Every `pollMs` it
 * takes the broadcasts whose counts are due, one at a time (claims make that safe with any number
 * of replicas), recounts each in one statement and schedules its next recount (domain/
 * count-schedule.ts), until none is due. `stop` ends after the recount in flight.
 */
export function startCountRefresher(
  deps: { store: CountStore; bus: Bus; logger: Logger },
  opts: CountRefresherOptions,
): { stop(): Promise<void> } {
  const { store, bus, logger } = deps
  let stopping = false
  let adoptedAt = Number.NEGATIVE_INFINITY

  const tick = async () => {
    if (performance.now() - adoptedAt >= ADOPT_EVERY_MS) {
      const n = await store.adoptMissing()
      adoptedAt = performance.now()
      if (n > 0) logger.info({ broadcasts: n }, 'broadcasts without stored counts found; counting them')
    }
    while (!stopping && !bus.nc.isClosed()) {
      const c = await store.claimDue(opts.leaseMs)
      if (!c) return
      try {
        await store.recount(c, nextCountInMs(c, new Date(), opts.schedule))
      } catch (err) {
        // Its lease stays: it is tried again when that runs out, after those due meanwhile.
        if (!bus.nc.isClosed()) logger.warn({ err, broadcastId: c.id }, 'recounting broadcast emails failed')
      }
    }
  }

  const loop = every(opts.pollMs, 'broadcast-count-refresh', logger, async () => {
    // Killed (crash simulation): nothing can be read on a closed connection, and its failures
    // are no news.
    if (bus.nc.isClosed()) return
    try {
      await tick()
    } catch (err) {
      if (!bus.nc.isClosed()) throw err
    }
  })

  return {
    async stop() {
      // A pass over many due broadcasts ends after the recount in flight.
      stopping = true
      await loop.stop()
    },
  }
}
