import { SUBJECTS, TrackClickRequest, TrackOpenRequest, type TrackReply } from '@mailer/contracts'
import type { EmailContext } from '../app.js'
import { TrackingStore } from '../infra/tracking-store.js'

/**
 * Opens and clicks reported by the gateway's public tracking links (`email.track.*`). The token
 * was verified there; an email that no longer exists records nothing and is not an error.
 */
export function serveTracking(ctx: EmailContext): void {
  const { rt } = ctx
  const store = new TrackingStore(rt.db, ctx.outbox)
  const recorded = rt.metrics.counter('tracking_events_total', 'Opens and clicks recorded as events', [
    'type',
  ])

  rt.bus.serve(
    SUBJECTS.emailTrackOpen,
    TrackOpenRequest,
    async (req): Promise<TrackReply> => {
      const rows = await store.open(req.emailId, req.userAgent, new Date())
      if (!rows) return { recorded: false }
      ctx.publish(rows)
      recorded.inc({ type: 'email.opened' })
      return { recorded: true }
    },
    { queue: 'email' },
  )

  rt.bus.serve(
    SUBJECTS.emailTrackClick,
    TrackClickRequest,
    async (req): Promise<TrackReply> => {
      const rows = await store.click(req.emailId, req.url, req.userAgent, new Date())
      if (!rows) return { recorded: false }
      ctx.publish(rows)
      recorded.inc({ type: 'email.clicked' })
      rt.logger.debug({ requestId: req.requestId, emailId: req.emailId }, 'click recorded')
      return { recorded: true }
    },
    { queue: 'email' },
  )
}
