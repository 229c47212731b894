import type { Logger } from '@mailer/observability'
import type { NextStep } from '../domain/retry-schedule.js'
import type { ClaimedDelivery } from './delivery-store.js'
import type { SendResult } from './http-sender.js'

/**
 * A failed attempt, for the operator following an alert (operations.md, MailerWebhookFailureRate):
 * a retry at info, a delivery out of attempts at warn. The receiver's status, or for an attempt
 * without one our own reason (refused, timed out, blocked); never the receiver's body (it may
 * echo the payload's addresses), its URL or the secret.
 */
export function logFailedAttempt(
  logger: Logger,
  row: ClaimedDelivery,
  result: SendResult,
  step: NextStep,
): void {
  const fields = {
    deliveryId: row.id,
    webhookId: row.webhookId,
    projectId: row.projectId,
    attempt: row.attempt,
    outcome: result.outcome,
    responseCode: result.responseCode,
    ...(result.responseCode === null ? { reason: result.responseBody.slice(0, 200) } : {}),
    ...(step.status === 'pending' ? { retryInSeconds: Math.round(step.delayMs / 1000) } : {}),
  }
  if (step.status === 'failed') logger.warn(fields, 'webhook delivery failed: no attempt left')
  else logger.info(fields, 'webhook attempt failed; retrying later')
}
