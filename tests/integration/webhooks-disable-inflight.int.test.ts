import { waitFor } from '@mailer/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { useStack } from '../support/use-stack.js'
import {
  EventPublisher,
  gate,
  listDeliveries,
  makeEvent,
  projectWithReceiver,
  type Received,
  type Reply,
  sleep,
  sql,
} from '../support/webhooks.js'

// Disabling a webhook while its attempts are on their way. The receiver holds its answers until
// the webhook is disabled: the attempt time-out is long enough that none of them times out first,
// however slow the machine (with webhooks-delivery's 1.5 s one, a busy run could time the held
// request out before the receiver answered it).
const { te, client, receivers } = useStack(['auth', 'webhook', 'gateway'], {
  testEnv: {
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_RETRY_SCHEDULE_SECONDS: '1,1,2',
    WEBHOOK_TIMEOUT_MS: '20000',
    WEBHOOK_POLL_MS: '500',
  },
  after: () => events.close(),
})
let events: EventPublisher

beforeAll(async () => {
  events = await EventPublisher.connect(te)
})

const setup = (reply?: (r: Received, n: number) => Reply, slug = 'inflight') =>
  projectWithReceiver(client, slug, receivers, reply)
const deliveries = (key: string, webhookId: string) => listDeliveries(client, key, webhookId)

describe('disabling a webhook', () => {
  it('disabling fails pending retries with "webhook disabled" and stops new deliveries; retry and test need it enabled', async () => {
    // The first attempt is answered (500) once the webhook is disabled: answered at once, its retry
    // (1 s on) went out first whenever the disabling took longer than that on a loaded machine.
    const first = gate()
    let healthy = false
    const { receiver, p, wh, projectId } = await setup(
      (_r, i) =>
        i === 1
          ? { status: 500, body: 'broken', after: first.held }
          : healthy
            ? { status: 200 }
            : { status: 500, body: 'broken' },
      'disable-retry',
    )
    await events.publish(projectId, makeEvent())
    await waitFor(() => receiver.requests.length === 1)
    const off = await client.patch(`/v1/webhooks/${wh.id}`, p.live, { enabled: false })
    const [d] = await deliveries(p.live, wh.id)
    first.release()
    expect(off.status).toBe(200)
    expect(off.body.enabled).toBe(false)
    // Disabling fails the delivery whose attempt is on its way, as it does a waiting retry.
    expect(d).toMatchObject({
      status: 'failed',
      responseCode: null,
      responseBody: 'webhook disabled',
      nextAttemptAt: null,
      attempt: 1,
    })
    expect(d.completedAt).not.toBeNull()

    await events.publish(projectId, makeEvent())
    await sleep(1500)
    expect(receiver.requests).toHaveLength(1)
    // The 500 answered "broken" since then does not replace the reason: no HTTP answer goes with it.
    expect(await deliveries(p.live, wh.id)).toEqual([d])

    const test = await client.post(`/v1/webhooks/${wh.id}/test`, p.live)
    expect(test.status).toBe(409)
    expect(test.body.error).toMatchObject({ type: 'conflict', code: 'webhook_disabled' })
    const retry = await client.post(`/v1/webhooks/${wh.id}/deliveries/${d.id}/retry`, p.live)
    expect(retry.status).toBe(409)
    expect(retry.body.error.code).toBe('webhook_disabled')

    // Manual retry redelivers now, with the same delivery id. The attempt that was on its way kept
    // its lease until its 500 came back (a retry leaves an attempt in flight alone), then let it go
    // (the tests below).
    await waitFor(
      async () =>
        (await sql(te, 'SELECT locked_until FROM webhook_deliveries WHERE id = $1', [d.id]))[0]
          ?.locked_until === null,
      { what: "the held attempt's lease let go" },
    )
    healthy = true
    await client.patch(`/v1/webhooks/${wh.id}`, p.live, { enabled: true })
    const again = await client.post(`/v1/webhooks/${wh.id}/deliveries/${d.id}/retry`, p.live)
    expect(again.status).toBe(202)
    expect(again.body).toMatchObject({ id: d.id, status: 'pending' })
    // Due now, not after a wait of the schedule: read off the answer, not timed on a loaded machine.
    expect(new Date(again.body.nextAttemptAt).getTime()).toBeLessThanOrEqual(Date.now())
    await waitFor(() => receiver.requests.length === 2, { what: 'the manual retry' })
    expect(receiver.requests[1]!.headers['service-delivery-id']).toBe(d.id)
    const done = await waitFor(async () =>
      (await deliveries(p.live, wh.id))[0]?.status === 'success'
        ? (await deliveries(p.live, wh.id))[0]
        : null,
    )
    expect(done).toMatchObject({ id: d.id, attempt: 2, responseCode: 200, completedAt: expect.any(String) })

    const missing = await client.post(
      `/v1/webhooks/${wh.id}/deliveries/whd_01ARZ3NDEKTSV4RRFFQ69G5FAV/retry`,
      p.live,
    )
    expect(missing.status).toBe(404)
    expect(missing.body.error.code).toBe('delivery_not_found')
  })

  it('disabling while attempts are in flight: the one answered 2xx stays a success, the failed one is failed "webhook disabled"', async () => {
    const { held: answered, release } = gate()
    const { receiver, p, wh, projectId } = await setup((r) =>
      r.body.data.recipient === 'ok@example.com'
        ? { status: 200, body: 'got it', after: answered }
        : { status: 503, body: 'busy', after: answered },
    )
    await events.publish(projectId, makeEvent('email.delivered', { data: { recipient: 'ok@example.com' } }))
    await events.publish(projectId, makeEvent('email.delivered', { data: { recipient: 'no@example.com' } }))
    await waitFor(() => receiver.requests.length === 2, { what: 'both attempts in flight' })
    const off = await client.patch(`/v1/webhooks/${wh.id}`, p.live, { enabled: false })
    expect(off.status).toBe(200)
    release()
    const idOf = (recipient: string) =>
      receiver.requests.find((r) => r.body.data.recipient === recipient)!.body.id
    // Disabling fails both at once; the 2xx recorded when it comes in turns its one into a success.
    // So wait for that, then for the 503's answer to have come in too, before reading both.
    await waitFor(async () => {
      const list = await deliveries(p.live, wh.id)
      return list.find((d) => d.eventId === idOf('ok@example.com'))?.status === 'success'
    })
    await sleep(1500)
    const settled = await deliveries(p.live, wh.id)
    const byId = (recipient: string) => settled.find((d) => d.eventId === idOf(recipient))
    // The receiver took this one: it is not a delivery that failed.
    expect(byId('ok@example.com')).toMatchObject({
      status: 'success',
      responseCode: 200,
      responseBody: 'got it',
    })
    // This one would wait for a retry: disabling fails it, as it does a waiting retry; the 503
    // that came in afterwards does not replace the reason.
    expect(byId('no@example.com')).toMatchObject({
      status: 'failed',
      responseCode: null,
      responseBody: 'webhook disabled',
      nextAttemptAt: null,
    })
    expect(receiver.requests).toHaveLength(2)
  })

  it("a manual retry while the disabled webhook's attempt is still in flight leaves it alone", async () => {
    const { held: answered, release } = gate()
    const { receiver, p, wh, projectId } = await setup(
      (_r, n) =>
        n === 1 ? { status: 200, body: 'got it', after: answered } : { status: 500, body: 'second copy' },
      'inflight-retry',
    )
    await events.publish(projectId, makeEvent('email.delivered'))
    await waitFor(() => receiver.requests.length === 1, { what: 'the attempt in flight' })
    expect((await client.patch(`/v1/webhooks/${wh.id}`, p.live, { enabled: false })).status).toBe(200)
    expect((await client.patch(`/v1/webhooks/${wh.id}`, p.live, { enabled: true })).status).toBe(200)
    const [failed] = await deliveries(p.live, wh.id)
    expect(failed).toMatchObject({ status: 'failed', responseBody: 'webhook disabled', attempt: 1 })
    // Returned unchanged: the attempt is still out (a retry now sent a second copy at once).
    const retried = await client.post(`/v1/webhooks/${wh.id}/deliveries/${failed!.id}/retry`, p.live)
    expect(retried.status).toBe(202)
    expect(retried.body).toMatchObject({ status: 'failed', attempt: 1, responseBody: 'webhook disabled' })
    release()
    const settled = await waitFor(async () => {
      const [d] = await deliveries(p.live, wh.id)
      return d?.status === 'success' ? d : null
    })
    // The receiver's 2xx is what the delivery says, and it got one copy.
    expect(settled).toMatchObject({
      status: 'success',
      attempt: 1,
      responseCode: 200,
      responseBody: 'got it',
    })
    await sleep(1500)
    expect(receiver.requests).toHaveLength(1)
  })

  it("a manual retry once the disabled webhook's attempt came back without a 2xx sends it again at once", async () => {
    const { held: answered, release } = gate()
    const { receiver, p, wh, projectId } = await setup(
      (_r, n) =>
        n === 1 ? { status: 500, body: 'broken', after: answered } : { status: 200, body: 'fixed' },
      'inflight-back',
    )
    await events.publish(projectId, makeEvent('email.delivered'))
    await waitFor(() => receiver.requests.length === 1, { what: 'the attempt in flight' })
    expect((await client.patch(`/v1/webhooks/${wh.id}`, p.live, { enabled: false })).status).toBe(200)
    release()
    expect((await client.patch(`/v1/webhooks/${wh.id}`, p.live, { enabled: true })).status).toBe(200)
    const [failed] = await deliveries(p.live, wh.id)
    // Retried until the 500 is recorded (a retry before that leaves the attempt in flight alone).
    // Well within the 15 s lease the attempt held: the lease went with the answer, and before, a
    // retry was answered unchanged until it ran out.
    const retried = await waitFor(
      async () => {
        const r = await client.post(`/v1/webhooks/${wh.id}/deliveries/${failed!.id}/retry`, p.live)
        return r.body.status === 'pending' ? r : null
      },
      { what: 'a retry taken', timeoutMs: 5_000, intervalMs: 200 },
    )
    expect(retried.status).toBe(202)
    const settled = await waitFor(async () => {
      const [d] = await deliveries(p.live, wh.id)
      return d?.status === 'success' ? d : null
    })
    expect(settled).toMatchObject({
      id: failed!.id,
      status: 'success',
      responseCode: 200,
      responseBody: 'fixed',
    })
    expect(receiver.requests).toHaveLength(2)
  })
})
