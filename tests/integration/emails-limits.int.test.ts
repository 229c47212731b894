import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { email, inSeconds, projectWithDomain } from '../support/emails.js'
import { Stack } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'

// RATE_LIMIT=5 per 60 s, so the limits show with a handful of sends.
const { te, client } = useStack(['auth', 'email', 'gateway'], { env: { RATE_LIMIT: '5', RATE_PERIOD: '60' } })
const replica = new Stack(te, { RATE_LIMIT: '5', RATE_PERIOD: '60' })

beforeAll(async () => {
  await replica.start('email')
})
afterAll(async () => {
  await replica.stopAll()
})

const send = (
  p: { live: string; from: string },
  over: Record<string, unknown> = {},
  key = p.live,
  headers?: Record<string, string>,
) => client.post('/v1/emails', key, email(p.from, over), headers)

describe('per-minute rate limit (interface.md part 8)', () => {
  it('the sixth live send within the window is 429 rate_limited with Retry-After: 60', async () => {
    const p = await projectWithDomain(client, 'rate')
    for (let i = 0; i < 5; i++) expect((await send(p, { to: `r${i}@x.test` })).status).toBe(202)
    const r = await send(p, { to: 'r5@x.test' })
    expect(r.status).toBe(429)
    expect(r.headers.get('retry-after')).toBe('60')
    expect(r.body.error).toEqual({
      type: 'rate_limit_error',
      code: 'rate_limited',
      message: expect.any(String),
    })
  })

  it('is shared by every replica: concurrent sends through two replicas admit exactly the limit', async () => {
    const p = await projectWithDomain(client, 'shared')
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => send(p, { to: `s${i}@x.test` })))
    const statuses = results.map((r) => r.status).sort()
    expect(statuses.filter((s) => s === 202)).toHaveLength(5)
    expect(statuses.filter((s) => s === 429)).toHaveLength(7)
  })

  it('two projects sending at the same moment each get their own allowance', async () => {
    const p = await projectWithDomain(client, 'twin-a')
    const q = await projectWithDomain(client, 'twin-b')
    await send(q, { to: 'first@x.test' })
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) => send(i % 2 ? q : p, { to: `tw${i}@x.test` })),
    )
    const accepted = (odd: number) => results.filter((r, i) => i % 2 === odd && r.status === 202)
    expect(accepted(0)).toHaveLength(5)
    expect(accepted(1)).toHaveLength(4)
    expect(results.filter((r) => r.status !== 202).every((r) => r.status === 429)).toBe(true)
  })

  it('test keys never count and are never limited', async () => {
    const p = await projectWithDomain(client, 'testkey')
    for (let i = 0; i < 7; i++) expect((await send(p, {}, p.test)).status).toBe(200)
    for (let i = 0; i < 5; i++) expect((await send(p, { to: `t${i}@x.test` })).status).toBe(202)
  })

  it('an idempotent repeat is answered before the limit and not counted again', async () => {
    const p = await projectWithDomain(client, 'idem')
    const first = await send(p, {}, p.live, { 'idempotency-key': 'once' })
    for (let i = 0; i < 4; i++) await send(p, { to: `i${i}@x.test` })
    expect((await send(p, { to: 'over@x.test' })).status).toBe(429)
    const again = await send(p, {}, p.live, { 'idempotency-key': 'once' })
    expect(again.status).toBe(202)
    expect(again.body).toEqual({ id: first.body.id, status: 'queued', idempotent: true })
  })

  it('at the limit, the checks before it still answer first, on every replica', async () => {
    const p = await projectWithDomain(client, 'atlimit')
    await client.post('/v1/admin/suppressions', client.admin, { address: 'blocked@x.test' })
    const first = await send(p, {}, p.live, { 'idempotency-key': 'k' })
    for (let i = 0; i < 4; i++) expect((await send(p, { to: `a${i}@x.test` })).status).toBe(202)
    // Each replica learns of the limit from its own first refusal, and reads the counters first
    // from then on: repeated sends reach both replicas in both states.
    for (let i = 0; i < 6; i++) {
      expect((await send(p, { to: `over${i}@x.test` })).status).toBe(429)
      const blocked = await send(p, { to: 'blocked@x.test' })
      expect(blocked.status).toBe(422)
      expect(blocked.body.error).toMatchObject({ code: 'recipient_suppressed', param: 'blocked@x.test' })
      const repeat = await send(p, {}, p.live, { 'idempotency-key': 'k' })
      expect(repeat.body).toEqual({ id: first.body.id, status: 'queued', idempotent: true })
      const changed = await send(p, { subject: 'other' }, p.live, { 'idempotency-key': 'k' })
      expect(changed.status).toBe(409)
    }
  })

  it('the admin mirror counts like a live key', async () => {
    const p = await projectWithDomain(client, 'mirror')
    for (let i = 0; i < 5; i++) {
      expect(
        (await client.post('/v1/admin/projects/mirror/emails', client.admin, email(p.from))).status,
      ).toBe(202)
    }
    expect((await send(p)).status).toBe(429)
  })

  it('in a batch, items are admitted in order up to the allowance; the rest carry rate_limited', async () => {
    const p = await projectWithDomain(client, 'batchrate')
    await send(p)
    const items = [
      email('x@elsewhere.test'),
      ...Array.from({ length: 6 }, (_, i) => email(p.from, { to: `b${i}@x.test` })),
    ]
    const r = await client.post('/v1/emails/batch', p.live, items)
    expect(r.status).toBe(200)
    expect(r.body.data[0].error.code).toBe('invalid_sender')
    expect(r.body.data.slice(1, 5).map((d: any) => d.status)).toEqual([
      'queued',
      'queued',
      'queued',
      'queued',
    ])
    expect(r.body.data.slice(5).map((d: any) => d.error)).toEqual([
      { type: 'rate_limit_error', code: 'rate_limited', message: expect.any(String) },
      { type: 'rate_limit_error', code: 'rate_limited', message: expect.any(String) },
    ])
    // A dry run now reports the exhausted allowance without counting anything.
    const dry = await client.post('/v1/emails/batch?dryRun=true', p.live, [email(p.from)])
    expect(dry.body.data[0].error.code).toBe('rate_limited')
  })
})

describe('daily limit (interface.md part 8)', () => {
  it('each accepted email counts once; past dailyLimit a send is 429 daily_limit_exceeded', async () => {
    const p = await projectWithDomain(client, 'daily', 'daily.test', { dailyLimit: 3 })
    const r = await client.post(
      '/v1/emails/batch',
      p.live,
      Array.from({ length: 4 }, (_, i) => email(p.from, { to: `d${i}@x.test` })),
    )
    expect(r.body.data.slice(0, 3).map((d: any) => d.status)).toEqual(['queued', 'queued', 'queued'])
    expect(r.body.data[3].error).toEqual({
      type: 'rate_limit_error',
      code: 'daily_limit_exceeded',
      message: expect.any(String),
    })
    const single = await send(p, { to: 'more@x.test' })
    expect(single.status).toBe(429)
    expect(single.body.error.code).toBe('daily_limit_exceeded')
    expect(single.headers.get('retry-after')).toBeNull()
    // Raising the limit takes effect at once.
    await client.patch('/v1/admin/projects/daily', client.admin, { dailyLimit: 4 })
    expect((await send(p, { to: 'more@x.test' })).status).toBe(202)
  })

  it('a scheduled email counts on the day it is scheduled, not the day it is due', async () => {
    const p = await projectWithDomain(client, 'sched', 'sched.test', { dailyLimit: 1 })
    expect((await send(p, { scheduledAt: inSeconds(2 * 86400) })).status).toBe(202)
    expect((await send(p)).body.error.code).toBe('daily_limit_exceeded')
  })

  it('a canceled email keeps its place in the day: canceling gives no room back', async () => {
    const p = await projectWithDomain(client, 'cancelday', 'cancelday.test', { dailyLimit: 1 })
    const first = await send(p, { scheduledAt: inSeconds(3600) })
    expect(first.status).toBe(202)
    const canceled = await client.call('DELETE', `/v1/emails/${first.body.id}`, { key: p.live })
    expect(canceled.body).toEqual({ id: first.body.id, status: 'canceled' })
    expect((await send(p)).body.error.code).toBe('daily_limit_exceeded')
  })

  it('dailyLimit 0 means no daily limit', async () => {
    const p = await projectWithDomain(client, 'nolimit', 'nolimit.test', { dailyLimit: 0 })
    const r = await client.post(
      '/v1/emails/batch',
      p.live,
      Array.from({ length: 5 }, () => email(p.from)),
    )
    expect(r.body.data.every((d: any) => d.status === 'queued')).toBe(true)
  })

  it('test keys are not limited by the daily limit', async () => {
    const p = await projectWithDomain(client, 'dailytest', 'dailytest.test', { dailyLimit: 1 })
    expect((await send(p)).status).toBe(202)
    expect((await send(p, {}, p.test)).status).toBe(200)
    expect((await send(p, {}, p.test)).status).toBe(200)
  })
})
