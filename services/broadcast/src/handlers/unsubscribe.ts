import { SUBJECTS, type UnsubscribeReply, UnsubscribeRequest } from '@mailer/contracts'
import type { BroadcastContext } from '../app.js'
import { unsubscribeContact } from '../infra/contact-tombstones.js'

/** `contacts.unsubscribe`: the gateway's one-click unsubscribe link, once its token verified. */
export function serveUnsubscribe({ rt, metrics }: BroadcastContext): void {
  rt.bus.serve(
    SUBJECTS.contactsUnsubscribe,
    UnsubscribeRequest,
    async ({ projectId, contactId }): Promise<UnsubscribeReply> => {
      await unsubscribeContact(rt.db, projectId, contactId)
      metrics.unsubscribes.inc()
      rt.logger.info({ projectId, contactId }, 'contact unsubscribed through its link')
      return { unsubscribed: true }
    },
    { queue: 'broadcast' },
  )
}
