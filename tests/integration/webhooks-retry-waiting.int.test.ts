import { waitFor } from '@mailer/testing'
import { describe, expect, it } from 'vitest'
import { useStack } from '../support/use-stack.js'
import { listDeliveries, projectWithReceiver } from '../support/webhooks.js'

// A failed attempt waits an hour for the next one: within this test only a manual retry can send
// the delivery again. An operator who fixed the endpoint retries it rather than wait (contract
// part 4: the retry route "redelivers now").
const { client, receivers } = useStack(['auth', 'webhook', 'gateway'], {
  testEnv: {
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_RETRY_SCHEDULE_SECONDS: '3600,3600',
    WEBHOOK_POLL_MS: '500',
  },
})

describe('a manual retry of a delivery waiting for its next attempt', () => {
  it('makes it due now: it is sent again at once, under the same id, and succeeds', async () => {
    let healthy = false
    const { receiver, p, wh } = await projectWithReceiver(client, 'retry-waiting', receivers, () =>
      healthy ? { status: 200, body: 'ok' } : { status: 503, body: 'down' },
    )
    const test = await client.post(`/v1/webhooks/${wh.id}/test`, p.live)
    expect(test.status).toBe(202)
    const waiting = await waitFor(
      async () => {
        const [d] = await listDeliveries(client, p.live, wh.id)
        return d?.attempt === 1 && d.responseCode === 503 ? d : null
      },
      { what: 'the first attempt to fail' },
    )
    expect(waiting.status).toBe('pending')
    expect(new Date(waiting.nextAttemptAt).getTime()).toBeGreaterThan(Date.now() + 3000_000)

    healthy = true
    const retry = await client.post(`/v1/webhooks/${wh.id}/deliveries/${waiting.id}/retry`, p.live)
    expect(retry.status).toBe(202)
    expect(retry.body).toMatchObject({ id: waiting.id, status: 'pending' })
    expect(new Date(retry.body.nextAttemptAt).getTime()).toBeLessThanOrEqual(Date.now())
    await waitFor(() => receiver.requests.length === 2, { what: 'the retried attempt' })
    expect(receiver.requests[1]!.headers['service-delivery-id']).toBe(waiting.id)
    const done = await waitFor(
      async () => {
        const [d] = await listDeliveries(client, p.live, wh.id)
        return d?.status === 'success' ? d : null
      },
      { what: 'the delivery to succeed' },
    )
    expect(done).toMatchObject({ id: waiting.id, attempt: 2, responseCode: 200, nextAttemptAt: null })
  })
})
