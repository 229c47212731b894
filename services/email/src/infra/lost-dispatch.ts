import { CONSUMERS, STREAMS } from '@mailer/contracts'
import { every, type Loop } from '@mailer/observability'
import type { EmailContext } from '../app.js'

const BATCH = 500

/**
 * Every 15 s, when the dispatchers' consumer has nothing pending and nothing unacknowledged, a
 * `queued` email queued more than DISPATCH_RECOVERY_SECONDS ago has no dispatch message on the
 * way: the one it had is gone (a purged or restored stream, a message an older pod terminated
 * during an upgrade). Such emails are handed to the due sweeper (`next_attempt_at = now()`),
 * which publishes their dispatch messages. Claims keep a late duplicate harmless.
 */
export function startLostDispatchSweep(ctx: EmailContext, everyMs = 15_000): Loop {
  const { rt } = ctx
  const recovered = rt.metrics.counter(
    'dispatch_recovered_total',
    'Queued emails whose dispatch message was gone, handed to the due sweeper again',
  )
  return every(everyMs, 'lost dispatch sweep', rt.logger, async () => {
    if (!(await dispatchersIdle(ctx))) return
    for (;;) {
      const n = await rt.db.$executeRawUnsafe(
        `UPDATE emails SET next_attempt_at = now() WHERE id IN (
           SELECT id FROM emails
           WHERE status = 'queued' AND next_attempt_at IS NULL
             AND queued_at < now() - make_interval(secs => $1::float8)
           ORDER BY queued_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)`,
        rt.env.DISPATCH_RECOVERY_SECONDS,
      )
      if (n > 0) {
        recovered.inc(n)
        rt.logger.warn(
          { emails: n },
          'queued emails without a dispatch message on the way; dispatching them again',
        )
      }
      if (n < BATCH) return
    }
  })
}

/** No message waiting for the dispatchers and none in their hands; false if that is unknown. */
async function dispatchersIdle({ rt }: EmailContext): Promise<boolean> {
  try {
    // One request: consumers.get() would fetch the info once more before info() asked again.
    const info = await rt.bus.jsm.consumers.info(
      rt.bus.streamName(STREAMS.EMAILS.name),
      rt.bus.consumerName(CONSUMERS.dispatcherSend),
    )
    return info.num_pending === 0 && info.num_ack_pending === 0
  } catch {
    // No consumer yet (no dispatcher ever started) or NATS away: nothing can be concluded.
    return false
  }
}
