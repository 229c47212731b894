import type { WorkerOptions } from './worker-options.js'

/**
 * How many deliveries a worker claims, and the most a webhook may hold after the claim, given how
 * many attempts it has `running` and how many deliveries wait in its memory (`queued`). Normally
 * room for a slot's worth in flight and as many again waiting, `perWebhook + prefetch` per webhook.
 * Slow endpoints fill that room with deliveries that only wait for their own webhook's slots (each
 * holds `perWebhook + prefetch`: 8 slow webhooks hold 128 by default), and with no room no claim
 * ran: the free slots stayed empty and no other webhook of any project got an attempt on this
 * replica until a slow one answered. So when the room is smaller than the free slots, claim for
 * those slots, up to `perWebhook` per webhook counting what is held: every row claimed then can
 * start at once (a webhook with deliveries waiting holds `perWebhook` already, so is left out),
 * and at most 3 × concurrency are ever held.
 */
export function claimSize(
  opts: Pick<WorkerOptions, 'concurrency' | 'perWebhook' | 'prefetch'>,
  running: number,
  queued: number,
): { limit: number; perWebhook: number } {
  const { concurrency, perWebhook, prefetch } = opts
  const room = concurrency * 2 - running - queued
  const free = concurrency - running
  if (room >= free) return { limit: room, perWebhook: perWebhook + prefetch }
  return { limit: Math.min(free, concurrency * 3 - running - queued), perWebhook }
}
