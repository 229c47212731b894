import { planOutcome } from '../src/domain/outcome.js'
import type { RecipientReply } from '../src/domain/smtp-reply.js'
import type { ClaimResult } from '../src/infra/claim.js'
import type { AttemptRecord } from '../src/infra/record.js'

/**
 * What the dispatcher's own planning makes of claimed emails whose every recipient got the same
 * answer (a relay's 250 at the end of DATA, a 550 to RCPT TO): the records its outcome write takes.
 */
export function plannedRecords(
  claimed: ClaimResult[],
  answer: Pick<RecipientReply, 'stage' | 'code' | 'text'>,
): AttemptRecord[] {
  return claimed.map((c) => {
    if (c.kind !== 'claimed') throw new Error(`not claimed: ${c.kind}`)
    const { email } = c
    const messageId = `<${email.id}@example.com>`
    const plan = planOutcome({
      attempts: email.attempts,
      alreadySent: false,
      dueAt: email.dueAt,
      recipients: email.recipients,
      result: {
        provider: 'smtp',
        messageId,
        replies: email.recipients.map((r) => ({ address: r.address, ...answer })),
      },
      now: new Date(),
      policy: { maxRetries: 8, baseSeconds: 15, maxSeconds: 3600, platformLimitSeconds: 3600 },
    })
    return { email, plan, messageId }
  })
}
