import { DISPATCH_GROUP_MAX, type DispatchMessage, SUBJECTS } from '@mailer/contracts'

/** A dispatch message as the outbox writes it. */
export interface DispatchOutboxMessage {
  subject: typeof SUBJECTS.emailDispatch
  msgId: string
  payload: DispatchMessage
}

/**
 * The dispatch messages for emails made ready together (a sweep): one per DISPATCH_GROUP_MAX of
 * them, in the given order. The msgID is the group's first email and its attempt count (the
 * accept's own groups are `<first id>:0`, written by its statement, see infra/accept-sql.ts), and
 * for a release of emails already queued once (`releasedAt`: a retry, or an email the lost
 * dispatch sweep found without a message) also the release's time. An attempt count alone is not
 * unique then: an email recovered before any attempt is `<id>:0` again, and within the stream's
 * duplicate window (a backlog published late after a NATS outage) JetStream dropped that message
 * as a repeat of the accept's, so the email waited for another recovery minutes later.
 */
export function dispatchMessages(
  emails: Array<{ id: string; attempts: number }>,
  releasedAt?: number,
): DispatchOutboxMessage[] {
  const release = releasedAt === undefined ? '' : `:${releasedAt}`
  const messages: DispatchOutboxMessage[] = []
  for (let i = 0; i < emails.length; i += DISPATCH_GROUP_MAX) {
    const group = emails.slice(i, i + DISPATCH_GROUP_MAX)
    const first = group[0]!
    messages.push({
      subject: SUBJECTS.emailDispatch,
      msgId: `${first.id}:${first.attempts}${release}`,
      payload: { emailIds: group.map((e) => e.id) },
    })
  }
  return messages
}
