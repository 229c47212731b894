import { waitFor } from '@mailer/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'
import {
  EventPublisher,
  gate,
  listDeliveries,
  makeEvent,
  metricValue,
  projectWithReceiver,
  type Received,
  Receiver,
  type Reply,
  sleep,
  sql,
  verifyWebhook,
} from '../support/webhooks.js'

// A short retry schedule (waits of 1 s, 1 s, 2 s: four attempts) and a 1.5 s time-out.
const { te, stack, client, receivers } = useStack(['auth', 'webhook', 'gateway'], {
  testEnv: {
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_RETRY_SCHEDULE_SECONDS: '1,1,2',
    WEBHOOK_TIMEOUT_MS: '1500',
    WEBHOOK_POLL_MS: '500',
  },
  after: () => events.close(),
})
let events: EventPublisher

beforeAll(async () => {
  events = await EventPublisher.connect(te)
})

let n = 0
const setup = (reply?: (r: Received, n: number) => Reply, body: Record<string, unknown> = {}) =>
  projectWithReceiver(client, `dl-${++n}`, receivers, reply, body)
const deliveries = (key: string, webhookId: string) => listDeliveries(client, key, webhookId)

describe('delivery', () => {
  it('POSTs the event as stored, with every header, signed so an independent verifier accepts it', async () => {
    const { receiver, p, wh, projectId } = await setup(undefined, { events: ['email.delivered'] })
    const event = makeEvent('email.delivered')
    await events.publish(projectId, event)
    const [got] = await waitFor(() => (receiver.requests.length === 1 ? receiver.requests : null), {
      what: 'the delivery',
    })
    const req = got!

    expect(req.body).toEqual(event)
    expect(Object.keys(req.body)).toEqual(['id', 'type', 'createdAt', 'data'])
    expect(req.raw).toBe(JSON.stringify(event))
    expect(req.headers['content-type']).toBe('application/json')
    expect(req.headers['user-agent']).toBe('Service-Webhooks/1.0')
    expect(req.headers['service-event-id']).toBe(event.id)
    expect(req.headers['service-delivery-id']).toMatch(/^whd_[0-9A-Z]{26}$/)
    const sig = String(req.headers['service-signature'])
    expect(sig).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
    expect(Math.abs(Number(/t=(\d+)/.exec(sig)![1]) - Date.now() / 1000)).toBeLessThan(5)

    expect(verifyWebhook(sig, wh.secret, req.raw)).toBe(true)
    expect(verifyWebhook(sig, wh.secret, req.raw.replace('Hello', 'Hellp'))).toBe(false)
    expect(verifyWebhook(sig, wh.secret, req.raw, Date.now() + 301_000)).toBe(false)
    expect(verifyWebhook(`${sig},v1=${'0'.repeat(64)}`, wh.secret, req.raw)).toBe(true)
    expect(
      verifyWebhook(
        `t=${/t=(\d+)/.exec(sig)![1]},v1=${'0'.repeat(64)},${sig.split(',')[1]}`,
        wh.secret,
        req.raw,
      ),
    ).toBe(true)
    expect(verifyWebhook(sig, 'whsec_wrong', req.raw)).toBe(false)

    const d = await waitFor(async () => {
      const list = await deliveries(p.live, wh.id)
      return list[0]?.status === 'success' ? list : null
    })
    expect(d).toHaveLength(1)
    expect(d[0]).toEqual({
      id: req.headers['service-delivery-id'],
      webhookId: wh.id,
      eventId: event.id,
      eventType: 'email.delivered',
      attempt: 1,
      status: 'success',
      responseCode: 200,
      responseBody: 'ok',
      nextAttemptAt: null,
      createdAt: expect.any(String),
      completedAt: expect.any(String),
    })
  })

  it('delivers only matching types and never twice for the same event', async () => {
    const { receiver, projectId } = await setup(undefined, { events: ['email.bounced', 'email.failed'] })
    const bounced = makeEvent('email.bounced')
    await events.publish(projectId, makeEvent('email.delivered'))
    await events.publish(projectId, bounced)
    // The same event again (a redelivery from the stream's point of view).
    await events.publish(projectId, bounced, `${bounced.id}-again`)
    await events.publish(projectId, makeEvent('email.failed'))
    await waitFor(() => receiver.requests.length >= 2)
    await sleep(700)
    expect(receiver.requests.map((r) => r.body.type).sort()).toEqual(['email.bounced', 'email.failed'])
    const rows = await sql(te, 'SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = $1', [
      bounced.id,
    ])
    expect(rows[0].n).toBe(1)
  })

  it('retries on the configured schedule, keeps the delivery id, re-signs every attempt, then succeeds', async () => {
    const { receiver, p, wh, projectId } = await setup((_r, i) =>
      i <= 3 ? { status: 500, body: `fail ${i}` } : { status: 204 },
    )
    const event = makeEvent()
    await events.publish(projectId, event)
    await waitFor(() => receiver.requests.length === 4, { timeoutMs: 10_000, what: 'four attempts' })
    const at = receiver.requests.map((r) => r.at)
    const gaps = at.slice(1).map((t, i) => t - at[i]!)
    // Never shorter than its wait (begun once the answer before is recorded); later by a write, a claim
    // and a request (over a second on a loaded CI), never by a whole wait (a wrong step: 2 s, 4 s).
    expect(gaps[0]).toBeGreaterThanOrEqual(900)
    expect(gaps[0]).toBeLessThan(2000)
    expect(gaps[1]).toBeGreaterThanOrEqual(900)
    expect(gaps[1]).toBeLessThan(2000)
    expect(gaps[2]).toBeGreaterThanOrEqual(1900)
    expect(gaps[2]).toBeLessThan(4000)
    expect(new Set(receiver.requests.map((r) => r.headers['service-delivery-id'])).size).toBe(1)
    for (const r of receiver.requests) {
      expect(r.raw).toBe(JSON.stringify(event))
      expect(verifyWebhook(String(r.headers['service-signature']), wh.secret, r.raw)).toBe(true)
    }
    const d = await waitFor(async () =>
      (await deliveries(p.live, wh.id))[0]?.status === 'success' ? await deliveries(p.live, wh.id) : null,
    )
    expect(d[0]).toMatchObject({
      attempt: 4,
      status: 'success',
      responseCode: 204,
      responseBody: '',
      nextAttemptAt: null,
    })
  })

  it('counts attempts and ends failed after the schedule, keeping the first 1,024 characters of the answer', async () => {
    const { receiver, p, wh, projectId } = await setup(() => ({ status: 503, body: 'x'.repeat(2000) }))
    await events.publish(projectId, makeEvent())
    // Any attempt from the second on while it is still pending: "attempt 2" alone lasts about the
    // 1 s wait, which a loaded machine's polls could miss.
    const midway = await waitFor(
      async () => {
        const [d] = await deliveries(p.live, wh.id)
        return d && d.attempt >= 2 && d.status === 'pending' ? d : null
      },
      { what: 'a second attempt' },
    )
    expect(midway).toMatchObject({ status: 'pending', responseCode: 503 })
    expect(Date.parse(midway.nextAttemptAt)).toBeGreaterThan(Date.now() - 1500)
    const d = await waitFor(
      async () =>
        (await deliveries(p.live, wh.id))[0]?.status === 'failed'
          ? (await deliveries(p.live, wh.id))[0]
          : null,
      {
        timeoutMs: 10_000,
      },
    )
    expect(d).toMatchObject({ attempt: 4, status: 'failed', responseCode: 503, nextAttemptAt: null })
    expect(d.responseBody).toBe('x'.repeat(1024))
    expect(d.completedAt).not.toBeNull()
    await sleep(2500)
    expect(receiver.requests).toHaveLength(4)
  })

  it('records a time-out as "timeout after <n>s" and never follows a redirect', async () => {
    const target = await Receiver.start()
    receivers.push(target)
    const slow = await setup(() => 'hang')
    await events.publish(slow.projectId, makeEvent())
    // The row as first seen with an answer. Its attempt number is left out: a read a loaded
    // machine made late can find the retry (1 s on) claimed, counted 2, the time-out still there.
    const answered = async () => (await deliveries(slow.p.live, slow.wh.id)).find((d) => d.responseBody)
    const t = await waitFor(answered, { what: 'the time-out' })
    expect(t).toMatchObject({
      responseBody: 'timeout after 1.5s',
      status: 'pending',
      responseCode: null,
    })

    const redirect = await setup(() => ({ status: 302, body: 'moved', headers: { location: target.url() } }))
    await events.publish(redirect.projectId, makeEvent())
    const d = await waitFor(
      async () => (await deliveries(redirect.p.live, redirect.wh.id))[0]?.responseCode ?? null,
    )
    expect(d).toBe(302)
    expect((await deliveries(redirect.p.live, redirect.wh.id))[0]).toMatchObject({
      status: 'pending',
      responseBody: 'moved',
    })
    expect(target.requests).toHaveLength(0)
    await client.patch(`/v1/webhooks/${slow.wh.id}`, slow.p.live, { enabled: false })
    await client.patch(`/v1/webhooks/${redirect.wh.id}`, redirect.p.live, { enabled: false })
  })

  it('signs retries of older events with the new secret after a rotation; the old secret stops at once', async () => {
    // Answered (500) once the secret is rotated: its retry, a second on, comes after the rotation.
    const rotation = gate()
    const { receiver, p, wh, projectId } = await setup((_r, i) =>
      i === 1 ? { status: 500, after: rotation.held } : { status: 200 },
    )
    await events.publish(projectId, makeEvent())
    await waitFor(() => receiver.requests.length === 1)
    const rotated = await client.post(`/v1/webhooks/${wh.id}/rotate-secret`, p.live)
    rotation.release()
    expect(rotated.status).toBe(200)
    expect(rotated.body.secret).toMatch(/^whsec_[A-Za-z0-9]{32}$/)
    expect(rotated.body.secret).not.toBe(wh.secret)
    expect(rotated.body).toMatchObject({ id: wh.id, enabled: true })
    await waitFor(() => receiver.requests.length === 2, { what: 'the retry' })
    const [first, retry] = receiver.requests
    expect(verifyWebhook(String(first!.headers['service-signature']), wh.secret, first!.raw)).toBe(true)
    expect(retry!.headers['service-delivery-id']).toBe(first!.headers['service-delivery-id'])
    expect(verifyWebhook(String(retry!.headers['service-signature']), rotated.body.secret, retry!.raw)).toBe(
      true,
    )
    expect(verifyWebhook(String(retry!.headers['service-signature']), wh.secret, retry!.raw)).toBe(false)

    await events.publish(projectId, makeEvent())
    await waitFor(() => receiver.requests.length === 3)
    const later = receiver.requests[2]!
    expect(verifyWebhook(String(later.headers['service-signature']), rotated.body.secret, later.raw)).toBe(
      true,
    )
    expect(verifyWebhook(String(later.headers['service-signature']), wh.secret, later.raw)).toBe(false)
    const list = await client.get('/v1/webhooks', p.live)
    expect(JSON.stringify(list.body)).not.toContain('whsec_')
  })

  it('the test route delivers a signed synthetic email.delivered to the webhook whatever its filter', async () => {
    const { receiver, p, wh } = await setup(undefined, { events: ['email.bounced'] })
    const r = await client.post(`/v1/webhooks/${wh.id}/test`, p.live)
    expect(r.status).toBe(202)
    expect(r.body).toEqual({ deliveryId: expect.stringMatching(/^whd_[0-9A-Z]{26}$/) })
    await waitFor(() => receiver.requests.length === 1)
    const got = receiver.requests[0]!
    expect(got.body).toMatchObject({
      type: 'email.delivered',
      data: { test: true, delivery: { status: 'delivered' } },
    })
    expect(got.body.id).toMatch(/^evt_[0-9A-Z]{26}$/)
    expect(got.body.data).toHaveProperty('emailId')
    expect(got.headers['service-delivery-id']).toBe(r.body.deliveryId)
    expect(got.headers['service-event-id']).toBe(got.body.id)
    expect(verifyWebhook(String(got.headers['service-signature']), wh.secret, got.raw)).toBe(true)
  })

  it('a group message: each event reaches the matching webhooks of its own project, once', async () => {
    const a = await setup(undefined, { events: ['email.sent', 'email.delivered'] })
    const b = await setup()
    const aSent = makeEvent('email.sent')
    const aDelivered = makeEvent('email.delivered')
    const bDelivered = makeEvent('email.delivered')
    const group = [
      { projectId: a.projectId, event: aSent },
      { projectId: a.projectId, event: makeEvent('email.queued') },
      { projectId: a.projectId, event: aDelivered },
      { projectId: b.projectId, event: bDelivered },
    ]
    await events.publishGroup(group)
    // Redelivered (another msgId, same events): no second delivery.
    await events.publishGroup([...group].reverse())
    await waitFor(() => a.receiver.requests.length >= 2 && b.receiver.requests.length >= 1)
    await sleep(700)
    expect(a.receiver.requests.map((r) => r.body.id).sort()).toEqual([aSent.id, aDelivered.id].sort())
    expect(a.receiver.requests.find((r) => r.body.id === aSent.id)?.body).toEqual(aSent)
    expect(b.receiver.requests.map((r) => r.body)).toEqual([bDelivered])
  })

  it('stores an event once for all its webhooks; deleting a webhook drops only payloads no other one needs', async () => {
    const a = await setup()
    const second = await Receiver.start()
    receivers.push(second)
    const wh2 = await client.post('/v1/webhooks', a.p.live, { url: second.url() })
    const shared = makeEvent('email.delivered')
    await events.publish(a.projectId, shared)
    await waitFor(() => a.receiver.requests.length === 1 && second.requests.length === 1)
    expect(second.requests[0]!.body).toEqual(shared)
    const stored = async () =>
      (await sql(te, `SELECT payload FROM webhook_payloads WHERE event_id = $1`, [shared.id])) as any[]
    expect(await stored()).toEqual([{ payload: shared }])
    const rows = await sql(te, `SELECT payload FROM webhook_deliveries WHERE event_id = $1`, [shared.id])
    expect(rows).toEqual([{ payload: null }, { payload: null }])

    expect((await client.del(`/v1/webhooks/${a.wh.id}`, a.p.live)).status).toBe(200)
    expect(await stored()).toHaveLength(1)
    expect((await client.del(`/v1/webhooks/${wh2.body.id}`, a.p.live)).status).toBe(200)
    expect(await stored()).toHaveLength(0)
  })

  it('keeps projects apart: an event reaches only the webhooks of its own project', async () => {
    const a = await setup()
    const b = await setup()
    await events.publish(b.projectId, makeEvent())
    await waitFor(() => b.receiver.requests.length === 1)
    await sleep(500)
    expect(a.receiver.requests).toHaveLength(0)
  })

  it('a hanging endpoint never delays a healthy one, and holds at most 4 attempts in flight', async () => {
    const hanging = await Receiver.start(() => 'hang')
    const healthy = await Receiver.start()
    receivers.push(hanging, healthy)
    const p = await createProject(client, 'hol')
    const slow = await client.post('/v1/webhooks', p.live, { url: hanging.url() })
    await client.post('/v1/webhooks', p.live, { url: healthy.url() })
    // One message: the twelve events come in together.
    await events.publishGroup(
      Array.from({ length: 12 }, () => ({ projectId: p.project.id, event: makeEvent() })),
    )
    await waitFor(() => healthy.requests.length === 12, { what: 'all healthy deliveries' })
    // None waited for a hanging attempt to end (1.5 s), when the hanging endpoint's fifth goes:
    // counted, not timed from the publish, which a loaded machine made slower than a bound.
    const last = Math.max(...healthy.requests.map((r) => r.at))
    expect(hanging.requests.filter((r) => r.at <= last).length).toBeLessThanOrEqual(4)
    // Four attempts held open by the hanging endpoint, never more.
    expect(hanging.maxOpen).toBe(4)
    await client.patch(`/v1/webhooks/${slow.body.id}`, p.live, { enabled: false })
  })

  it('exports attempt counters, the attempt histogram and the pending gauge', async () => {
    const port = stack.metricsPort('webhook')
    expect(await metricValue(port, 'mailer_webhook_attempts_total', 'outcome="success"')).toBeGreaterThan(0)
    expect(await metricValue(port, 'mailer_webhook_attempts_total', 'outcome="failure"')).toBeGreaterThan(0)
    expect(await metricValue(port, 'mailer_webhook_attempts_total', 'outcome="timeout"')).toBeGreaterThan(0)
    expect(
      await metricValue(port, 'mailer_webhook_attempt_seconds_count', 'outcome="success"'),
    ).toBeGreaterThan(0)
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
    expect(text).toMatch(/^mailer_webhook_pending_deliveries \d+$/m)
    expect(text).toContain('mailer_webhook_consumer_pending')
  })
})
