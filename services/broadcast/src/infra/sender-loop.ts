import type { Bus } from '@mailer/bus'
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
 * chunk until it is sent, pauses, waits for allowance, or is lost to a cancel. `stop` finishes
 * the chunks in flight and hands the broadcasts back at once for another replica to continue.
 */
export function startSenderLoop(
  deps: { store: SenderStore; chunks: ChunkSender; bus: Bus; logger: Logger },
  opts: SenderLoopOptions,
): { stop(): Promise<void> } {
  const { store, chunks, bus, logger } = deps
  const active = new Map<string, Promise<void>>()
  let stopping = false
  let ticking: Promise<void> | null = null

  const run = async (b: ClaimedBroadcast): Promise<void> => {
    try {
      for (;;) {
        if (stopping || bus.nc.isClosed()) {
          if (!bus.nc.isClosed()) await store.release(b, 0)
          return
        }
        if ((await chunks.step(b)) !== 'continue') return
      }
    } catch (err) {
      // A process killed mid-chunk lands here too; its lease simply runs out.
      if (bus.nc.isClosed()) return
      logger.warn({ err, broadcastId: b.id }, 'broadcast chunk failed; will retry')
      await store.release(b, RETRY_AFTER_FAILURE_MS).catch(() => undefined)
    }
  }

  const tick = async () => {
    const free = opts.concurrency - active.size
    if (free <= 0) return
    for (const b of await store.claimDue(free, opts.leaseMs)) {
      active.set(
        b.id,
        run(b).finally(() => active.delete(b.id)),
      )
    }
  }

  const timer = setInterval(() => {
    if (ticking || stopping) return
    // Killed (crash simulation): stop polling, nothing to hand back.
    if (bus.nc.isClosed()) {
      clearInterval(timer)
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

  return {
    async stop() {
      stopping = true
      clearInterval(timer)
      // A claim in flight may still start runs; they see `stopping` and hand back at once.
      await ticking
      await Promise.allSettled([...active.values()])
    },
  }
}
