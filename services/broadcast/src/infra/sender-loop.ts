import type { Bus } from '@mailer/bus'
import type { LeaseKeeper } from '@mailer/db'
import type { Logger } from '@mailer/observability'
import type { ChunkSender } from './chunk-sender.js'
import type { ClaimedBroadcast, SenderStore } from './sender-store.js'

export interface SenderLoopOptions {
  pollMs: number
  concurrency: number
  leaseMs: number
}

/** After an unexpected failure (the email service did not answer, ...), try again this much later. */
const RETRY_AFTER_FAILURE_MS = 5_000

/**
 * The broadcast sending loop of one replica. Every `pollMs` it claims due broadcasts up to its
 * concurrency (leases make that safe with any number of replicas) and works each one chunk by
 * chunk until it is sent, pauses, waits for allowance, or is lost to a cancel. The leases of the
 * broadcasts it works are renewed meanwhile (`leases`), so a chunk may take longer than a lease
 * and a killed replica's broadcast continues elsewhere one lease after its last renewal. `stop`
 * finishes the chunks in flight and hands the broadcasts back at once for another replica to
 * continue.
 */
export function startSenderLoop(
  deps: {
    store: SenderStore
    chunks: ChunkSender
    leases: LeaseKeeper<ClaimedBroadcast>
    bus: Bus
    logger: Logger
  },
  opts: SenderLoopOptions,
): { stop(): Promise<void> } {
  const { store, chunks, leases, bus, logger } = deps
  const active = new Map<string, Promise<void>>()
  let stopping = false
  let ticking: Promise<void> | null = null

  const run = async (b: ClaimedBroadcast): Promise<void> => {
    try {
      for (;;) {
        // Its lease was found taken (a renewal matched nothing): another replica may have it.
        if (!leases.holds(b)) return
        if (stopping || bus.nc.isClosed()) {
          if (!bus.nc.isClosed()) await leases.release(b).then(() => store.release(b, 0))
          return
        }
        if ((await chunks.step(b)) !== 'continue') return
      }
    } catch (err) {
      // A process killed mid-chunk lands here too; its lease simply runs out.
      if (bus.nc.isClosed()) return
      logger.warn({ err, broadcastId: b.id }, 'broadcast chunk failed; will retry')
      await leases
        .release(b)
        .then(() => store.release(b, RETRY_AFTER_FAILURE_MS))
        .catch(() => undefined)
    } finally {
      void leases.release(b)
    }
  }

  const tick = async () => {
    const free = opts.concurrency - active.size
    if (free <= 0) return
    // Sent before the claim: the leases began no earlier (the database's now() is later).
    const at = performance.now()
    for (const b of await store.claimDue(free, opts.leaseMs)) {
      leases.hold(b, at)
      active.set(
        b.id,
        run(b).finally(() => active.delete(b.id)),
      )
    }
  }

  const timer = setInterval(() => {
    if (ticking || stopping) return
    // Killed (crash simulation): stop polling and renewing, nothing to hand back.
    if (bus.nc.isClosed()) {
      clearInterval(timer)
      leases.halt()
      return
    }
    ticking = tick()
      .catch((err) => {
        if (!bus.nc.isClosed()) logger.warn({ err }, 'claiming broadcasts failed; will retry')
      })
      .finally(() => {
        ticking = null
      })
  }, opts.pollMs)
  leases.start()

  return {
    async stop() {
      stopping = true
      clearInterval(timer)
      // A claim in flight may still start runs; they see `stopping` and hand back at once.
      await ticking
      await Promise.allSettled([...active.values()])
      await leases.stop()
    },
  }
}
