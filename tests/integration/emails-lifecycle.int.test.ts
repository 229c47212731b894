import { waitFor } from '@mailer/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../support/db.js'
import { email, inSeconds, projectWithDomain } from '../support/emails.js'
import { streamEvents, streamMessages } from '../support/streams.js'
import { useStack } from '../support/use-stack.js'

const { te, stack, client } = useStack(['auth', 'email', 'gateway'])
let acme: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
})

const send = (over: Record<string, unknown> = {}, key = acme.live) =>
  client.post('/v1/emails', key, email(acme.from, over))
const get = async (id: string) => (await client.get(`/v1/emails/${id}`, acme.live)).body
const dispatched = async (id: string) =>
  (await streamMessages(te, 'EMAILS')).filter((m) => m.data.emailIds.includes(id))

describe('dispatch through the EMAILS stream', () => {
  it('a queued email reaches the stream once, msgId <id>:0; its email.queued reaches EVENTS', async () => {
    const r = await send()
    const msgs = await waitFor(async () => {
      const m = await dispatched(r.body.id)
      return m.length ? m : null
    })
    expect(msgs).toEqual([
      {
        subject: 'emails.dispatch',
        msgId: `${r.body.id}:0`,
        data: { emailIds: [r.body.id] },
      },
    ])
    const queued = await waitFor(async () =>
      (await streamEvents(te)).find((m) => m.event.data.emailId === r.body.id),
    )
    expect(queued).toMatchObject({ projectId: acme.project.id, event: { type: 'email.queued' } })
    // The events one write recorded travel together: subject events.group, msgId g:<first event id>.
    const carrier = (await streamMessages(te, 'EVENTS')).find((m) =>
      m.data.events?.some((e: any) => e.event.id === queued.event.id),
    )
    expect(carrier).toMatchObject({ subject: 'events.group', msgId: `g:${queued.event.id}` })
    // Published rows leave the outbox (deleted in batches by the relay).
    await waitFor(
      async () => (await sql(te, 'SELECT 1 FROM outbox WHERE msg_id = $1', [`${r.body.id}:0`])).length === 0,
    )
  })

  it("a batch's queued emails share one dispatch message, 50 at most, msgId <first id>:0", async () => {
    const small = await client.post('/v1/emails/batch', acme.live, [
      email(acme.from),
      email(acme.from),
      email('x@elsewhere.test'),
    ])
    const ids: string[] = small.body.data.filter((d: any) => d.id).map((d: any) => d.id)
    expect(ids).toHaveLength(2)
    const [one] = await waitFor(async () => {
      const m = await dispatched(ids[0]!)
      return m.length ? m : null
    })
    expect(one).toEqual({ subject: 'emails.dispatch', msgId: `${ids[0]}:0`, data: { emailIds: ids } })

    const big = await client.post(
      '/v1/emails/batch',
      acme.live,
      Array.from({ length: 100 }, () => email(acme.from)),
    )
    const bigIds: string[] = big.body.data.map((d: any) => d.id)
    const groups = await waitFor(async () => {
      const all = (await streamMessages(te, 'EMAILS')).filter((m) =>
        m.data.emailIds.some((id: string) => bigIds.includes(id)),
      )
      return all.length === 2 ? all : null
    })
    expect(groups.map((g) => g.data.emailIds)).toEqual([bigIds.slice(0, 50), bigIds.slice(50)])
    expect(groups.map((g) => g.msgId)).toEqual([`${bigIds[0]}:0`, `${bigIds[50]}:0`])
  })

  it('test emails and scheduled emails are not dispatched; test emails publish no event', async () => {
    const t = await send({}, acme.test)
    const s = await send({ scheduledAt: inSeconds(3600) })
    const marker = await send()
    await waitFor(async () => (await dispatched(marker.body.id)).length > 0)
    expect(await dispatched(t.body.id)).toEqual([])
    expect(await dispatched(s.body.id)).toEqual([])
    const events = await streamEvents(te)
    expect(events.filter((m) => m.event.data.emailId === t.body.id)).toEqual([])
    expect(events.find((m) => m.event.data.emailId === s.body.id)?.event.type).toBe('email.scheduled')
  })

  it('a retry due (next_attempt_at set by the dispatcher) gets the next dispatch message, msgId <id>:<attempts>:<release>', async () => {
    const r = await send()
    await sql(
      te,
      "UPDATE emails SET status = 'deferred', attempts = 2, next_attempt_at = now() WHERE id = $1",
      [r.body.id],
    )
    const msg = await waitFor(async () =>
      (await dispatched(r.body.id)).find((m) => m.msgId?.startsWith(`${r.body.id}:2:`)),
    )
    expect(msg.data).toEqual({ emailIds: [r.body.id] })
    expect(
      (await sql(te, 'SELECT next_attempt_at FROM emails WHERE id = $1', [r.body.id]))[0].next_attempt_at,
    ).toBeNull()
  })

  it('an email the lost dispatch sweep hands back before any attempt gets a message of its own, not a duplicate', async () => {
    // What the sweep does after a NATS outage longer than DISPATCH_RECOVERY_SECONDS: the accept's
    // message, published late, is still in the stream's 2-minute duplicate window when the email
    // is released again with the same attempt count. It used to reuse `<id>:0` and JetStream
    // dropped it, so the email waited for another recovery minutes later.
    const r = await send()
    await waitFor(async () => (await dispatched(r.body.id)).some((m) => m.msgId === `${r.body.id}:0`))
    await sql(te, 'UPDATE emails SET next_attempt_at = now() WHERE id = $1', [r.body.id])
    const again = await waitFor(async () =>
      (await dispatched(r.body.id)).find((m) => m.msgId?.startsWith(`${r.body.id}:0:`)),
    )
    expect(again.data).toEqual({ emailIds: [r.body.id] })
  })
})

describe('DELETE /v1/emails/:id (cancel)', () => {
  it('cancels a queued email and records email.canceled', async () => {
    const r = await send()
    const c = await client.del(`/v1/emails/${r.body.id}`, acme.live)
    expect(c.status).toBe(200)
    expect(c.body).toEqual({ id: r.body.id, status: 'canceled' })
    const e = await get(r.body.id)
    expect(e.status).toBe('canceled')
    expect(e.events.map((x: any) => x.type)).toEqual(['email.queued', 'email.canceled'])
  })

  it('cancels a scheduled email, which then is never queued', async () => {
    // A minute ahead, made due once canceled: with 2 s, a loaded machine could take longer than
    // that to send and cancel it, and the sweeper queued it first. A second one, not canceled,
    // falls due in the same statement: once it is dispatched, a sweep has seen both due.
    const r = await send({ scheduledAt: inSeconds(60) })
    const control = await send({ scheduledAt: inSeconds(60) })
    expect((await client.del(`/v1/emails/${r.body.id}`, acme.live)).body.status).toBe('canceled')
    await sql(te, 'UPDATE emails SET scheduled_at = now() WHERE id = ANY($1::text[])', [
      [r.body.id, control.body.id],
    ])
    await waitFor(async () => (await dispatched(control.body.id)).length > 0, {
      what: 'the one not canceled',
    })
    expect((await get(r.body.id)).status).toBe('canceled')
    expect(await dispatched(r.body.id)).toEqual([])
  })

  it('anything else is 409 not_cancelable; unknown or foreign emails are 404 email_not_found', async () => {
    const r = await send()
    await client.del(`/v1/emails/${r.body.id}`, acme.live)
    const twice = await client.del(`/v1/emails/${r.body.id}`, acme.live)
    expect(twice.status).toBe(409)
    expect(twice.body.error).toMatchObject({ type: 'conflict', code: 'not_cancelable' })
    const t = await send({}, acme.test)
    expect((await client.del(`/v1/emails/${t.body.id}`, acme.live)).body.error.code).toBe('not_cancelable')
    const claimed = await send()
    await sql(te, "UPDATE emails SET status = 'sending' WHERE id = $1", [claimed.body.id])
    expect((await client.del(`/v1/emails/${claimed.body.id}`, acme.live)).status).toBe(409)

    const beta = await projectWithDomain(client, 'beta')
    const foreign = await client.del(`/v1/emails/${r.body.id}`, beta.live)
    expect(foreign.status).toBe(404)
    expect(foreign.body.error).toMatchObject({ type: 'not_found', code: 'email_not_found' })
    expect((await client.get(`/v1/emails/${r.body.id}`, beta.live)).status).toBe(404)
    expect((await client.del('/v1/emails/nope', acme.live)).body.error.code).toBe('email_not_found')
  })
})

describe('PATCH /v1/emails/:id (reschedule)', () => {
  it('moves a scheduled email to a new time and records another email.scheduled', async () => {
    const r = await send({ scheduledAt: inSeconds(3600) })
    const at = inSeconds(7200)
    const p = await client.patch(`/v1/emails/${r.body.id}`, acme.live, { scheduledAt: at })
    expect(p.status).toBe(200)
    expect(p.body).toMatchObject({
      id: r.body.id,
      status: 'scheduled',
      scheduledAt: new Date(at).toISOString(),
    })
    expect(p.body.events.map((e: any) => e.type)).toEqual(['email.scheduled', 'email.scheduled'])
    expect(p.body.events[1].data).toMatchObject({
      scheduledAt: new Date(at).toISOString(),
      rescheduled: true,
    })
  })

  it('takes a scheduledAt written without seconds, as ISO 8601 allows', async () => {
    const at = new Date(Date.now() + 3_600_000)
    const written = `${at.toISOString().slice(0, 16)}Z` // 2026-12-01T09:30Z
    const r = await send({ scheduledAt: written })
    expect([r.status, r.body.status]).toEqual([202, 'scheduled'])
    const got = await client.get(`/v1/emails/${r.body.id}`, acme.live)
    expect(got.body.scheduledAt).toBe(`${at.toISOString().slice(0, 16)}:00.000Z`)
  })

  it('rejects bad times with invalid_schedule and non-scheduled emails with 409', async () => {
    const r = await send({ scheduledAt: inSeconds(3600) })
    for (const scheduledAt of [inSeconds(-5), 'tomorrow', inSeconds(40 * 86400), null]) {
      const bad = await client.patch(`/v1/emails/${r.body.id}`, acme.live, { scheduledAt })
      expect(bad.status).toBe(400)
      expect(bad.body.error).toMatchObject({ code: 'invalid_schedule', param: 'scheduledAt' })
    }
    // Left out, scheduledAt is as missing as null: it was invalid_body with zod's wording.
    const none = await client.patch(`/v1/emails/${r.body.id}`, acme.live, {})
    expect([none.status, none.body.error]).toEqual([
      400,
      {
        type: 'validation_error',
        code: 'invalid_schedule',
        message: 'scheduledAt is required',
        param: 'scheduledAt',
      },
    ])
    const missing = await client.call('PATCH', `/v1/emails/${r.body.id}`, { key: acme.live })
    expect(missing.body.error.code).toBe('missing_body')
    const q = await send()
    const notScheduled = await client.patch(`/v1/emails/${q.body.id}`, acme.live, {
      scheduledAt: inSeconds(60),
    })
    expect(notScheduled.status).toBe(409)
    expect(notScheduled.body.error.code).toBe('not_cancelable')
  })
})

describe('the due sweeper', () => {
  it('queues a scheduled email when it is due, within about a second, and dispatches it', async () => {
    // Time enough on a loaded machine to accept it (a time past by then is refused) and read it
    // back as scheduled.
    const at = inSeconds(4)
    const r = await send({ scheduledAt: at })
    expect((await get(r.body.id)).status).toBe('scheduled')
    const e = await waitFor(async () => {
      const x = await get(r.body.id)
      return x.status === 'queued' ? x : null
    })
    const lag = new Date(e.queuedAt).getTime() - new Date(at).getTime()
    // Never early. The first sweep after the due time queues it, a second at most; 4 s leaves
    // three more for a loaded machine (2 s left one, which a tick skipped while the sweep before
    // it still ran, or an event loop held up, could take). A sweeper on a slower loop leaves it
    // scheduled longer than that most of the time (on the 10 s of the queue gauges 6 runs in 10,
    // on a minute's 14 in 15); one that never runs fails the wait above.
    expect(lag).toBeGreaterThanOrEqual(0)
    expect(lag).toBeLessThan(4_000)
    expect(e.events.map((x: any) => x.type)).toEqual(['email.scheduled', 'email.queued'])
    await waitFor(async () => (await dispatched(r.body.id)).some((m) => m.msgId === `${r.body.id}:0`))
  })

  it('a scheduled email falling due while the service is down is queued once it is back', async () => {
    // Made due once the service is down: with a time a second ahead, a loaded machine could take
    // longer than that to stop it, and its sweeper queued the email first.
    const r = await send({ scheduledAt: inSeconds(3600) })
    await stack.stop('email')
    await sql(te, `UPDATE emails SET scheduled_at = now() - interval '1 second' WHERE id = $1`, [r.body.id])
    expect((await sql(te, 'SELECT status FROM emails WHERE id = $1', [r.body.id]))[0].status).toBe(
      'scheduled',
    )
    await stack.start('email')
    await waitFor(async () => (await get(r.body.id)).status === 'queued')
    await waitFor(async () => (await dispatched(r.body.id)).length === 1)
  })
})

describe('the outbox', () => {
  it('an email committed by a process that died before publishing is published by a fresh instance', async () => {
    await stack.stop('email')
    await stack.start('email', { TEST_SKIP_OUTBOX_PUBLISH: 'true' })
    const r = await send({ to: 'crash@x.test' })
    expect(r.status).toBe(202)
    await stack.kill('email')
    expect(await dispatched(r.body.id)).toEqual([])
    expect((await sql(te, 'SELECT msg_id FROM outbox WHERE msg_id = $1', [`${r.body.id}:0`])).length).toBe(1)

    await stack.start('email')
    const msgs = await waitFor(
      async () => {
        const m = await dispatched(r.body.id)
        return m.length ? m : null
      },
      { timeoutMs: 15_000 },
    )
    expect(msgs.map((m) => m.msgId)).toEqual([`${r.body.id}:0`])
    await waitFor(
      async () => (await sql(te, 'SELECT 1 FROM outbox WHERE msg_id = $1', [`${r.body.id}:0`])).length === 0,
    )
  })
})
