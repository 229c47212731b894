import { CONSUMERS, STREAMS } from '@mailer/contracts'
import { every, type Loop } from '@mailer/observability'
import type { EmailContext } from '../app.js'

const BATCH = 500

/**
 * Every 15 s: a `queued` or `deferred` email waiting for its dispatch (no retry time set: its
 * message was written) whose latest dispatch message was written (at its queueing, or at the
 * release of its retry: `released_at`) more than DISPATCH_RECOVERY_SECONDS before every dispatch
 * message the dispatchers have not yet acknowledged has no message on the way: the one it had is
 * gone (a purged or restored stream, a message an older pod terminated during an upgrade), since
 * everything published up to then has been handled. Such emails are handed to the due sweeper (`next_attempt_at = now()`),
 * which publishes their dispatch messages. A message published late (the outbox sweeper after a
 * NATS outage longer than the margin) is then skipped by the dispatcher (the email waits for its
 * release, not claimable) and the release's message, with a msgId of its own
 * (domain/dispatch-messages.ts), sends it.
 *
 * An email still `sending` whose claim is that old lost its dispatcher as well as its message (a
 * live dispatcher keeps its message unacknowledged and its claim fresh until the outcome is
 * written): it is queued again the same way, as the redelivered message would have had it taken
 * over. Without this it stayed `sending` for good.
 */
export function startLostDispatchSweep(ctx: EmailContext, everyMs = 15_000): Loop {
  const { rt } = ctx
  const recovered = rt.metrics.counter(
    'dispatch_recovered_total',
    'Emails whose dispatch message was gone (queued, deferred, or left sending by a dispatcher lost with it), handed to the due sweeper again',
  )
  return every(everyMs, 'lost dispatch sweep', rt.logger, async () => {
    const handled = await handledUpTo(ctx)
    if (!handled) return
    const margin = rt.env.DISPATCH_RECOVERY_SECONDS
    const queued = await inChunks(() =>
      rt.db.$executeRawUnsafe(
        `UPDATE emails SET next_attempt_at = now() WHERE id IN (
           SELECT id FROM emails
           WHERE status IN ('queued', 'deferred') AND next_attempt_at IS NULL
             AND GREATEST(queued_at, released_at) < $2::timestamptz - make_interval(secs => $1::float8)
           ORDER BY GREATEST(queued_at, released_at) LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)`,
        margin,
        handled,
      ),
    )
    // Through emails_sending_idx. The fencing token (claimed_at) is left as it is: a dispatcher
    // that was only paused finds its claim gone (status) and records nothing.
    const sending = await inChunks(() =>
      rt.db.$executeRawUnsafe(
        `UPDATE emails SET status = 'queued', next_attempt_at = now() WHERE id IN (
           SELECT id FROM emails
           WHERE status = 'sending' AND claimed_at < $2::timestamptz - make_interval(secs => $1::float8)
           ORDER BY claimed_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)`,
        margin,
        handled,
      ),
    )
    if (queued + sending > 0) {
      recovered.inc(queued + sending)
      rt.logger.warn(
        { queued, sending },
        'emails without a dispatch message on the way; dispatching them again',
      )
    }
  })
}

/** Runs a statement of at most BATCH rows until it changes fewer; answers the rows changed. */
async function inChunks(run: () => Promise<number>): Promise<number> {
  let total = 0
  for (;;) {
    const n = await run()
    total += n
    if (n < BATCH) return total
  }
}

/**
 * The time up to which every dispatch message has been handled: now when the dispatchers'
 * consumer has nothing waiting and nothing in their hands, else when the oldest message not yet
 * acknowledged (the one after the consumer's ack floor) reached the stream; so a steady load,
 * which never leaves the consumer idle, still lets lost messages be found. Null when that is
 * unknown (no consumer yet, NATS away).
 */
async function handledUpTo({ rt }: EmailContext): Promise<Date | null> {
  const stream = rt.bus.streamName(STREAMS.EMAILS.name)
  try {
    // One request: consumers.get() would fetch the info once more before info() asked again.
    const info = await rt.bus.jsm.consumers.info(stream, rt.bus.consumerName(CONSUMERS.dispatcherSend))
    if (info.num_pending === 0 && info.num_ack_pending === 0) return new Date()
    const seq = info.ack_floor.stream_seq + 1
    const oldest = await rt.bus.jsm.streams.getMessage(stream, { seq }).catch(() => null)
    if (oldest) return oldest.time
    // Gone from the stream (purged, or past its age limit): the oldest unacknowledged message is
    // then no older than the stream's first one.
    const { state } = await rt.bus.jsm.streams.info(stream)
    return state.first_seq > seq && state.messages > 0 ? new Date(state.first_ts) : null
  } catch {
    return null
  }
}
