import { waitFor } from '@mailer/testing'
import { start } from '@mailer/webhook/app'
import { loadEnv } from '@mailer/webhook/env'
import { beforeAll, describe, expect, it } from 'vitest'
import { createProject } from '../support/http.js'
import { spawnService } from '../support/processes.js'
import { useStack } from '../support/use-stack.js'
import {
  EventPublisher,
  fakeId,
  gate,
  makeEvent,
  metricValue,
  Receiver,
  sleep,
  sql,
  verifyWebhook,
} from '../support/webhooks.js'

// Waits of 2 s between four attempts; the default 1 s poll.
const { te, stack, client, receivers } = useStack(['auth', 'webhook', 'gateway'], {
  testEnv: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE_SECONDS: '2,2,2' },
  after: () => events.close(),
})
let events: EventPublisher

beforeAll(async () => {
  events = await EventPublisher.connect(te)
})

describe('durability', () => {
  it('keeps every pending retry on time, once per attempt, across restarts of the service', async () => {
    const down = await Receiver.start(() => ({ status: 500, body: 'down' }))
    receivers.push(down)
    const p = await createProject(client, 'restart')
    const hooks: string[] = []
    for (const path of ['/a', '/b', '/c'])
      hooks.push((await client.post('/v1/webhooks', p.live, { url: down.url(path) })).body.id)
    const sent = [makeEvent(), makeEvent('email.bounced')]
    for (const e of sent) await events.publish(p.project.id, e)
    const total = hooks.length * sent.length
    await waitFor(() => down.requests.length === total, { what: 'every first attempt' })

    // Graceful restart before the second attempts are due, and again before the third. When the
    // service was down, each time: a retry that falls due meanwhile goes once it is back.
    const restarts: Array<{ from: number; to: number }> = []
    const restart = async (pauseMs: number) => {
      const from = Date.now()
      await stack.stop('webhook')
      await sleep(pauseMs)
      await stack.start('webhook')
      restarts.push({ from, to: Date.now() })
    }
    await restart(400)
    await waitFor(() => down.requests.length === total * 2, { timeoutMs: 5000, what: 'every second attempt' })
    await restart(300)
    await waitFor(() => down.requests.length === total * 4, { timeoutMs: 10_000, what: 'every attempt' })
    await sleep(2500)
    expect(down.requests).toHaveLength(total * 4)

    const byDelivery = new Map<string, number[]>()
    for (const r of down.requests) {
      const id = String(r.headers['service-delivery-id'])
      byDelivery.set(id, [...(byDelivery.get(id) ?? []), r.at])
    }
    expect(byDelivery.size).toBe(total)
    for (const times of byDelivery.values()) {
      expect(times).toHaveLength(4)
      for (let i = 1; i < times.length; i++) {
        const [before, at] = [times[i - 1]!, times[i]!]
        // Never early.
        expect(at - before).toBeGreaterThanOrEqual(1900)
        // Never a whole wait late (a lost or doubled wait): counted from when it fell due or, if
        // the service restarted in the meantime, from when it was back. A bound on the gap alone
        // counted the restart too, which a loaded machine has taken over a second to make.
        const due = before + 2000
        const back = restarts.filter((r) => r.from < at && r.to > before).map((r) => r.to)
        expect(at - Math.max(due, ...back)).toBeLessThan(2000)
      }
    }
    for (const id of hooks) {
      const list = (await client.get(`/v1/webhooks/${id}/deliveries`, p.live)).body.data
      expect(list).toHaveLength(sent.length)
      for (const d of list)
        expect(d).toMatchObject({ status: 'failed', attempt: 4, responseCode: 500, responseBody: 'down' })
    }
  })

  it('several replicas share the work: every delivery exactly once', async () => {
    const rx = await Receiver.start()
    receivers.push(rx)
    const second = await start(loadEnv(stack.env()))
    try {
      const p = await createProject(client, 'replicas')
      await client.post('/v1/webhooks', p.live, { url: rx.url() })
      const sent = Array.from({ length: 30 }, () => makeEvent())
      await Promise.all(sent.map((e) => events.publish(p.project.id, e)))
      await waitFor(() => rx.requests.length >= sent.length, { timeoutMs: 10_000, what: 'every delivery' })
      await sleep(1000)
      expect(rx.requests.map((r) => r.body.id).sort()).toEqual(sent.map((e) => e.id).sort())
      const a = await metricValue(
        stack.metricsPort('webhook'),
        'mailer_webhook_attempts_total',
        'outcome="success"',
      )
      const b = await metricValue(second.ops.port, 'mailer_webhook_attempts_total', 'outcome="success"')
      expect(a + b).toBeGreaterThanOrEqual(sent.length)
    } finally {
      await second.stop()
    }
  })

  it("a crashed replica's claim comes back when its lease ends, not before", async () => {
    const rx = await Receiver.start()
    receivers.push(rx)
    const p = await createProject(client, 'crash')
    const wh = (await client.post('/v1/webhooks', p.live, { url: rx.url() })).body
    // A delivery claimed for its first attempt by a replica that then died: leased for 3 more
    // seconds. No outcome of that claim was recorded, so the attempt after the lease is still the first.
    const event = makeEvent()
    const id = fakeId('whd')
    const [{ leaseEnd }] = await sql(
      te,
      `INSERT INTO webhook_deliveries (id, webhook_id, project_id, event_id, event_type, payload, attempt, status, next_attempt_at, locked_until)
       VALUES ($1, $2, $3, $4, $5, $6, 1, 'pending', now(), now() + interval '3 seconds')
       RETURNING (extract(epoch FROM locked_until) * 1000)::float8 AS "leaseEnd"`,
      [id, wh.id, p.project.id, event.id, event.type, JSON.stringify(event)],
    )
    await waitFor(() => rx.requests.length === 1, { timeoutMs: 8000, what: 'the attempt after the lease' })
    const got = rx.requests[0]!
    expect(got.headers['service-delivery-id']).toBe(id)
    expect(got.body).toEqual(event)
    // Measured from the lease's end as written (the same clock), not from before the insert, whose
    // own time a loaded machine added to the wait. Never before it; after it, within a poll (1 s
    // here) and the claim and request, which a loaded machine has taken over a second to make.
    expect(got.at).toBeGreaterThanOrEqual(leaseEnd - 100)
    expect(got.at - leaseEnd).toBeLessThan(3000)
    const d = await waitFor(async () => {
      const [x] = (await client.get(`/v1/webhooks/${wh.id}/deliveries`, p.live)).body.data
      return x?.status === 'success' ? x : null
    })
    expect(d).toMatchObject({ id, attempt: 1, responseCode: 200 })
  })
})

/** The time-out of a replica whose first attempt a receiver holds: longer than any test waits. */
const HELD_TIMEOUT_MS = 30_000

describe('deliveries claimed ahead (WEBHOOK_PREFETCH)', () => {
  /** The only webhook replica, one slot per webhook: a hanging attempt makes the rest wait, claimed ahead. */
  const oneSlotReplica = async (timeoutMs: number) => {
    await stack.stop('webhook')
    return start(
      loadEnv(stack.env({ WEBHOOK_ENDPOINT_CONCURRENCY: '1', WEBHOOK_TIMEOUT_MS: String(timeoutMs) })),
    )
  }
  const leased = async (webhookId: string): Promise<number> => {
    const [row] = await sql(
      te,
      'SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND locked_until > now()',
      [webhookId],
    )
    return row.n
  }

  it('a replica that stops hands back the deliveries waiting in its memory, unattempted', async () => {
    // The first attempt is answered (500: retried on schedule) only once the stopping replica has
    // handed the rest back. It was a 1 s time-out: a loaded machine took longer than that to
    // publish and claim the six, so the next one went out before the check.
    const { held, release } = gate()
    const rx = await Receiver.start((_, n) =>
      n === 1 ? { status: 500, body: 'down', after: held } : { status: 200, body: 'ok' },
    )
    receivers.push(rx)
    const only = await oneSlotReplica(HELD_TIMEOUT_MS)
    let wh: { id: string }
    let p: Awaited<ReturnType<typeof createProject>>
    try {
      p = await createProject(client, 'handback')
      wh = (await client.post('/v1/webhooks', p.live, { url: rx.url() })).body
      for (let i = 0; i < 6; i++) await events.publish(p.project.id, makeEvent())
      await waitFor(async () => (await leased(wh.id)) === 6, { what: 'all six claimed' })
      // Leased before it is posted: wait for the receiver to hold the first one.
      await waitFor(() => rx.requests.length >= 1 || null, { what: 'the first attempt at the receiver' })
      expect(rx.requests).toHaveLength(1)
      const stopping = only.stop()
      await waitFor(async () => (await leased(wh.id)) === 1, { what: 'the five waiting handed back' })
      release()
      await stopping
    } finally {
      release()
      await only.stop()
      await stack.start('webhook')
    }
    const restarted = Date.now()
    // Leased for 15 s (renewed while held): only a hand-back lets them go out at once.
    await waitFor(() => rx.requests.length >= 6, { timeoutMs: 5000, what: 'the five handed back' })
    expect(Math.max(...rx.requests.map((r) => r.at)) - restarted).toBeLessThan(5000)
    const list = await waitFor(
      async () => {
        const data = (await client.get(`/v1/webhooks/${wh.id}/deliveries`, p.live)).body.data as Array<{
          status: string
          attempt: number
        }>
        return data.length === 6 && data.every((d) => d.status === 'success') ? data : null
      },
      { timeoutMs: 8000, what: 'every delivery a success, the hung one on its retry' },
    )
    // The five handed back were attempted once each (handing back undid the attempt their claim
    // had counted); the one answered 500 succeeded on its second attempt.
    expect(list.map((d) => d.attempt).sort()).toEqual([1, 1, 1, 1, 1, 2])
  })

  it('a replica killed with deliveries waiting in its memory costs them no attempt: each still gets the whole schedule', async () => {
    const rx = await Receiver.start((_, n) => (n === 1 ? 'hang' : { status: 500, body: 'down' }))
    receivers.push(rx)
    // A real process, SIGKILLed: one slot, two claimed ahead, leased for 15 s (renewed until the
    // kill). The time-out outlasts the test, so the hanging attempt is still on its way when the
    // replica is killed, however busy the machine (with 1 s, then 2.5 s, a loaded run sent the
    // next one first); the kill ends the hang.
    await stack.stop('webhook')
    const only = await spawnService(
      'webhook',
      stack.env({
        WEBHOOK_ENDPOINT_CONCURRENCY: '1',
        WEBHOOK_PREFETCH: '2',
        WEBHOOK_TIMEOUT_MS: String(HELD_TIMEOUT_MS),
      }),
    )
    let p: Awaited<ReturnType<typeof createProject>>
    let wh: { id: string }
    try {
      p = await createProject(client, 'killed-ahead')
      wh = (await client.post('/v1/webhooks', p.live, { url: rx.url() })).body
      for (let i = 0; i < 3; i++) await events.publish(p.project.id, makeEvent())
      await waitFor(async () => (await leased(wh.id)) === 3, { what: 'one in flight, two waiting' })
      // Leased before it is posted: wait for the receiver to hold the first one.
      await waitFor(() => rx.requests.length >= 1 || null, { what: 'the first attempt at the receiver' })
      expect(rx.requests).toHaveLength(1)
    } finally {
      await only.kill()
      await stack.start('webhook')
    }
    const list = await waitFor(
      async () => {
        const data = (await client.get(`/v1/webhooks/${wh.id}/deliveries`, p.live)).body.data as Array<{
          id: string
          status: string
          attempt: number
        }>
        return data.length === 3 && data.every((d) => d.status === 'failed') ? data : null
      },
      { timeoutMs: 45_000, what: 'every delivery failed after its schedule' },
    )
    await sleep(500)
    const posts = (id: string) => rx.requests.filter((r) => r.headers['service-delivery-id'] === id).length
    const first = String(rx.requests[0]!.headers['service-delivery-id'])
    // The two that waited were never sent by the killed replica: four attempts each (schedule
    // 2,2,2), as the receiver saw. The one on its way had no outcome recorded: it is made again
    // under its number, so the receiver saw it once more than its four.
    for (const d of list)
      expect({ attempt: d.attempt, posts: posts(d.id) }).toEqual({
        attempt: 4,
        posts: d.id === first ? 5 : 4,
      })
  }, 90_000)

  it('disabling the webhook fails the deliveries waiting in memory with no attempt counted', async () => {
    // The one in flight is answered only after the webhook is disabled. It was a 2.5 s time-out: a
    // loaded machine could take longer than that to get here, and the next one went out first.
    const { held, release } = gate()
    const rx = await Receiver.start((_, n) =>
      n === 1 ? { status: 503, body: 'busy', after: held } : { status: 200, body: 'ok' },
    )
    receivers.push(rx)
    const only = await oneSlotReplica(HELD_TIMEOUT_MS)
    let back = false
    try {
      const p = await createProject(client, 'disable-ahead')
      const wh = (await client.post('/v1/webhooks', p.live, { url: rx.url() })).body
      for (let i = 0; i < 3; i++) await events.publish(p.project.id, makeEvent())
      await waitFor(async () => (await leased(wh.id)) === 3, { what: 'one in flight, two waiting' })
      await waitFor(() => rx.requests.length >= 1 || null, { what: 'the first attempt at the receiver' })
      expect((await client.patch(`/v1/webhooks/${wh.id}`, p.live, { enabled: false })).status).toBe(200)
      // The one in flight is answered 503 and stays failed "webhook disabled". Once that answer is
      // counted its slot has been given back (the worker counts after): anything still waiting in
      // memory would have started by then, and the stop waits for what is in flight.
      release()
      await waitFor(
        async () =>
          (await metricValue(only.ops.port, 'mailer_webhook_attempts_total', 'outcome="failure"')) === 1 ||
          null,
        { what: 'the answer to the attempt in flight' },
      )
      await only.stop()
      await stack.start('webhook')
      back = true
      const list = (await client.get(`/v1/webhooks/${wh.id}/deliveries`, p.live)).body.data as Array<{
        id: string
        attempt: number
        status: string
        responseBody: string
      }>
      expect(rx.requests).toHaveLength(1)
      const sent = String(rx.requests[0]!.headers['service-delivery-id'])
      expect(list).toHaveLength(3)
      for (const d of list)
        expect(d).toMatchObject({
          status: 'failed',
          responseBody: 'webhook disabled',
          attempt: d.id === sent ? 1 : 0,
        })
    } finally {
      release()
      await only.stop()
      if (!back) await stack.start('webhook')
    }
  })

  it('a secret rotated while they wait signs them: they are handed back and claimed again', async () => {
    // The first attempt is answered once the rotation is (the replica hands back before it
    // answers). It was a 1.5 s time-out: a loaded machine took longer than that to claim the four
    // and rotate, and the next one went out, signed with the old secret, before the rotation.
    const { held, release } = gate()
    const rx = await Receiver.start((_, n) =>
      n === 1 ? { status: 200, body: 'ok', after: held } : { status: 200, body: 'ok' },
    )
    receivers.push(rx)
    const only = await oneSlotReplica(HELD_TIMEOUT_MS)
    try {
      const p = await createProject(client, 'rotate-ahead')
      const wh = (await client.post('/v1/webhooks', p.live, { url: rx.url() })).body
      for (let i = 0; i < 4; i++) await events.publish(p.project.id, makeEvent())
      await waitFor(async () => (await leased(wh.id)) === 4, {
        what: 'all four claimed, three waiting behind the one in flight',
      })
      // Leased before it is posted: wait for the receiver to hold the first one.
      await waitFor(() => rx.requests.length >= 1 || null, { what: 'the first attempt at the receiver' })
      const rotated = (await client.post(`/v1/webhooks/${wh.id}/rotate-secret`, p.live)).body
      expect(rx.requests).toHaveLength(1)
      release()
      await waitFor(() => rx.requests.length >= 4, { timeoutMs: 8000, what: 'the three that waited' })
      for (const r of rx.requests.slice(1)) {
        const sig = String(r.headers['service-signature'])
        expect(verifyWebhook(sig, rotated.secret, r.raw)).toBe(true)
        expect(verifyWebhook(sig, wh.secret, r.raw)).toBe(false)
      }
    } finally {
      release()
      await only.stop()
      await stack.start('webhook')
    }
  })
})
