import { MailerClient } from '@mailer/client'
import { describe, expect, it } from 'vitest'
import { sql } from '../support/db.js'
import { email, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// A single send with ?dryRun=true is a batch's dry run of one item: every check, nothing stored,
// counted or published. It used to ignore the parameter and really send.
const { te, stack, client } = useStack(['auth', 'email', 'gateway'])

const stored = async (projectId: string) => {
  const [row] = await sql(
    te,
    `SELECT (SELECT count(*)::int FROM emails WHERE project_id = $1) AS emails,
            (SELECT count(*)::int FROM outbox) AS outbox`,
    [projectId],
  )
  return row
}

describe('POST /v1/emails?dryRun=true', () => {
  it('answers 200 { id: null, status } and stores, counts and publishes nothing', async () => {
    // A daily limit of 1: a dry run that counted would leave no room for the real send after it.
    const p = await projectWithDomain(client, 'dry', 'dry.test', { dailyLimit: 1 })
    const outboxBefore = (await stored(p.project.id)).outbox
    for (const q of ['true', '1']) {
      const r = await client.post(`/v1/emails?dryRun=${q}`, p.live, email(p.from))
      expect(r.status).toBe(200)
      expect(r.body).toEqual({ id: null, status: 'queued' })
    }
    const scheduled = email(p.from, { scheduledAt: new Date(Date.now() + 3_600_000).toISOString() })
    const s = await client.post('/v1/emails?dryRun=true', p.live, scheduled)
    expect(s.status).toBe(200)
    expect(s.body).toEqual({ id: null, status: 'scheduled' })
    const t = await client.post('/v1/emails?dryRun=true', p.test, email(p.from))
    expect(t.status).toBe(200)
    expect(t.body).toEqual({ id: null, status: 'test' })
    // The admin mirror takes the parameter too.
    const m = await client.post('/v1/admin/projects/dry/emails?dryRun=true', client.admin, email(p.from))
    expect(m.status).toBe(200)
    expect(m.body).toEqual({ id: null, status: 'queued' })

    expect((await client.get('/v1/emails', p.live)).body.data).toEqual([])
    expect((await client.get('/v1/emails', p.test)).body.data).toEqual([])
    expect(await stored(p.project.id)).toEqual({ emails: 0, outbox: outboxBefore })

    // ?dryRun=false is a real send; the limit of 1 still has its room.
    const real = await client.post('/v1/emails?dryRun=false', p.live, email(p.from))
    expect(real.status).toBe(202)
    expect(real.body).toEqual({ id: expect.stringMatching(/^email_/), status: 'queued' })
    expect((await client.get(`/v1/emails/${real.body.id}`, p.live)).status).toBe(200)
    // The limit is now reached: a dry run is refused exactly as a real send.
    const dry = await client.post('/v1/emails?dryRun=true', p.live, email(p.from))
    const again = await client.post('/v1/emails', p.live, email(p.from))
    expect(again.status).toBe(429)
    expect(dry.status).toBe(429)
    expect(dry.body.error).toEqual(again.body.error)
  })

  it('answers every error exactly as a real send would', async () => {
    const p = await projectWithDomain(client, 'dryerr', 'dryerr.test')
    const cases: Array<[unknown, Record<string, string>]> = [
      [email('x@elsewhere.test'), {}],
      [email(p.from, { reply_to: 'a@b.test' }), {}],
      [email(p.from, { to: [] }), {}],
      [undefined, {}],
      [null, {}],
      [email(p.from), { 'idempotency-key': '' }],
    ]
    for (const [body, headers] of cases) {
      const real = await client.post('/v1/emails', p.live, body, headers)
      const dry = await client.post('/v1/emails?dryRun=true', p.live, body, headers)
      expect(real.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400)
      expect(dry.status, JSON.stringify(body)).toBe(real.status)
      expect(dry.body.error, JSON.stringify(body)).toEqual(real.body.error)
    }
    // A key an email already holds answers that email, as a batch's dry run does.
    const first = await client.post('/v1/emails', p.live, email(p.from), { 'idempotency-key': 'k1' })
    const repeat = await client.post('/v1/emails?dryRun=true', p.live, email(p.from), {
      'idempotency-key': 'k1',
    })
    expect(repeat.body).toEqual({ id: first.body.id, status: 'queued', idempotent: true })
    const other = await client.post('/v1/emails?dryRun=true', p.live, email(p.from, { subject: 'x' }), {
      'idempotency-key': 'k1',
    })
    expect(other.status).toBe(409)
    expect(other.body.error.code).toBe('idempotency_payload_mismatch')
    // A value the parameter does not take is refused, never read as a real send.
    const bad = await client.post('/v1/emails?dryRun=maybe', p.live, email(p.from))
    expect(bad.status).toBe(400)
    expect(bad.body.error).toMatchObject({ code: 'invalid_query', param: 'dryRun' })
    expect((await stored(p.project.id)).emails).toBe(1)
  })

  it('is the SDK send option dryRun', async () => {
    const p = await projectWithDomain(client, 'drysdk', 'drysdk.test')
    const sdk = new MailerClient({ apiKey: p.live, baseUrl: stack.gatewayUrl })
    expect(await sdk.emails.send(email(p.from), { dryRun: true })).toEqual({ id: null, status: 'queued' })
    expect((await sdk.emails.list()).data).toEqual([])
  })
})
