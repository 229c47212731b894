import type { NatsConnection } from 'nats'

interface Protocol {
  flushPending(): void
  outbound: { size(): number }
  pendingLimit: number
}

/**
 * Writes what a connection publishes once per turn of the event loop instead of once per
 * callback. nats.js flushes its outbound buffer in a microtask, i.e. after each I/O callback, so
 * a gateway answering 32 HTTP requests that arrived together made 32 socket writes (one syscall
 * and one wake-up of the NATS server each). Deferred to `setImmediate` (the check phase right after
 * the poll phase has run every ready callback), those become one write, and no message waits for
 * a timer. A flush asked for while one is pending is folded into it; a buffer past the client's
 * own threshold (32 KiB) is still written at once, so a burst of large messages in one turn never
 * piles up in memory.
 */
export function coalesceFlushes(nc: NatsConnection): void {
  const protocol = (nc as unknown as { protocol?: Partial<Protocol> }).protocol
  if (typeof protocol?.flushPending !== 'function' || typeof protocol.outbound?.size !== 'function') return
  const p = protocol as Protocol
  const flushNow = p.flushPending.bind(p)
  let scheduled = false
  p.flushPending = () => {
    if (p.outbound.size() >= p.pendingLimit) {
      flushNow()
      return
    }
    if (scheduled) return
    scheduled = true
    setImmediate(() => {
      scheduled = false
      flushNow()
    })
  }
}
