import { serveRoutes } from '@mailer/bus'
import { DevEventBody, fail, parseBody } from '@mailer/contracts'
import type { EmailContext } from '../app.js'
import { DevEventStore } from '../infra/dev-event-store.js'

/**
 * `POST /v1/admin/dev/events` (contract.md part 2): fakes a delivery event for an email, for
 * trying webhooks and suppressions without a relay. Without `DEV_ROUTES=true` it does not exist
 * (404 `route_not_found`, as the gateway answers an unknown path).
 */
export function serveDevEvents(ctx: EmailContext): void {
  const { rt } = ctx
  const store = new DevEventStore(rt.db, ctx.outbox)
  const faked = rt.metrics.counter('dev_events_total', 'Events faked through the dev route', ['type'])

  serveRoutes(rt.bus, 'email', {
    'api.email.dev.events.create': async ({ caller, body }) => {
      if (!rt.env.DEV_ROUTES)
        throw fail('route_not_found', 'No route /v1/admin/dev/events (DEV_ROUTES is off)')
      const input = parseBody(DevEventBody, body)
      const { event, rows } = await store.record(input, new Date())
      ctx.publish(rows)
      faked.inc({ type: event.type })
      rt.logger.info(
        { requestId: caller.requestId, emailId: input.emailId, type: event.type, eventId: event.id },
        'dev event faked',
      )
      return event
    },
  })
}
