import { DISPATCH_GROUP_MAX, type DispatchMessage, SUBJECTS } from '@mailer/contracts'

/** A dispatch message as the outbox writes it. */
export interface DispatchOutboxMessage {
  subject: typeof SUBJECTS.emailDispatch
  msgId: string
  payload: DispatchMessage
}

/**
 * The dispatch messages for emails made ready together (a sweep): one per DISPATCH_GROUP_MAX of
 * them, in the given order. The msgID is the group's first email and its attempt count, which no
 * other group repeats: an email is made ready once per attempt (the accept's own groups are
 * `<first id>:0`, written by its statement, see infra/accept-sql.ts).
 */
export function dispatchMessages(emails: Array<{ id: string; attempts: number }>): DispatchOutboxMessage[] {
  const messages: DispatchOutboxMessage[] = []
  for (let i = 0; i < emails.length; i += DISPATCH_GROUP_MAX) {
    const group = emails.slice(i, i + DISPATCH_GROUP_MAX)
    const first = group[0]!
    messages.push({
      subject: SUBJECTS.emailDispatch,
      msgId: `${first.id}:${first.attempts}`,
      payload: { emailIds: group.map((e) => e.id) },
    })
  }
  return messages
}
