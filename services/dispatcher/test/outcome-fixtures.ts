import type { RecipientStatus } from '@mailer/email-core'
import { type PlanInput, planOutcome } from '../src/domain/outcome.js'
import type { RecipientReply } from '../src/domain/smtp-reply.js'

// The relay's answers and the attempt planOutcome's unit tests plan (outcome.test.ts,
// outcome-suppressed.test.ts): one attempt at `now` of an email due 1.5 s before.
export const now = new Date('2026-01-01T12:00:00.000Z')
export const createdAt = new Date('2026-01-01T11:59:58.500Z')
export const policy = { maxRetries: 8, baseSeconds: 15, maxSeconds: 3600, platformLimitSeconds: 3600 }
export const ok = (address: string): RecipientReply => ({
  address,
  stage: 'message',
  code: 250,
  text: '250 2.0.0 Ok: queued',
})
export const unknownUser = (address: string): RecipientReply => ({
  address,
  stage: 'rcpt',
  code: 550,
  text: '550 5.1.1 User unknown',
})
export const dropped = (address: string): RecipientReply => ({
  address,
  stage: 'connection',
  code: null,
  text: 'Connection closed unexpectedly',
})
export const quota = (address: string): RecipientReply => ({
  address,
  stage: 'message',
  code: 451,
  text: '451 4.7.1 Daily sending quota exceeded',
})

export function plan(replies: RecipientReply[], over: Partial<PlanInput> = {}) {
  const statuses =
    over.recipients ?? replies.map((r) => ({ address: r.address, status: 'queued' as RecipientStatus }))
  return planOutcome({
    attempts: 1,
    alreadySent: false,
    dueAt: createdAt,
    recipients: statuses,
    result: { provider: 'smtp', messageId: '<email_1@acme.test>', replies },
    now,
    policy,
    random: () => 1,
    ...over,
  })
}
