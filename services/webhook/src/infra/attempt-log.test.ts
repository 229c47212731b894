import { createLogger } from '@mailer/observability'
import { describe, expect, it } from 'vitest'
import { logFailedAttempt } from './attempt-log.js'
import type { ClaimedDelivery } from './delivery-store.js'

const row: ClaimedDelivery = {
  id: 'whd_1',
  webhookId: 'wh_1',
  projectId: 'proj_1',
  eventId: 'evt_1',
  attempt: 3,
  lease: '2026-11-28T00:00:00.000Z',
  payload: {},
  url: 'https://hooks.example.test/path/s3cr3t-token',
  secret: 'whsec_abcdefghijklmnopqrstuvwxyz012345',
  enabled: true,
}

function logged(fn: (logger: ReturnType<typeof createLogger>) => void): Record<string, unknown>[] {
  const lines: string[] = []
  const logger = createLogger({ service: 'webhook', level: 'info' }, { write: (s: string) => lines.push(s) })
  fn(logger)
  return lines.map((l) => JSON.parse(l))
}

describe('a failed webhook attempt in the logs (operations.md, MailerWebhookFailureRate)', () => {
  it('is an info line while a retry follows, with the receiver status and when it is tried again', () => {
    const [line] = logged((l) =>
      logFailedAttempt(
        l,
        row,
        { outcome: 'failure', responseCode: 500, responseBody: '{"echo":"alice@example.com"}' },
        { status: 'pending', delayMs: 300_000 },
      ),
    )
    expect(line).toMatchObject({
      level: 'info',
      deliveryId: 'whd_1',
      webhookId: 'wh_1',
      projectId: 'proj_1',
      attempt: 3,
      outcome: 'failure',
      responseCode: 500,
      retryInSeconds: 300,
    })
    // The receiver's body may echo the payload's addresses; the URL and secret stay out too.
    const text = JSON.stringify(line)
    for (const never of ['alice@example.com', 's3cr3t-token', 'whsec_']) expect(text).not.toContain(never)
  })

  it('is a warn line once no attempt is left, with our own reason when the receiver gave no status', () => {
    const [line] = logged((l) =>
      logFailedAttempt(
        l,
        row,
        { outcome: 'timeout', responseCode: null, responseBody: 'no answer within 10 s' },
        { status: 'failed' },
      ),
    )
    expect(line).toMatchObject({
      level: 'warn',
      outcome: 'timeout',
      responseCode: null,
      reason: 'no answer within 10 s',
      msg: 'webhook delivery failed: no attempt left',
    })
    expect(line).not.toHaveProperty('retryInSeconds')
  })
})
