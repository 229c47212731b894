import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../support/db.js'
import { email, inSeconds, projectWithDomain } from '../support/emails.js'
import { rawExchange } from '../support/raw-http.js'
import { Stack } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'

const { te, client, stack } = useStack(['auth', 'email', 'gateway'])
// A second email replica on the same database and NATS prefix, to show concurrent duplicates
// arriving at different replicas still make one email.
const replica = new Stack(te)
let acme: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  await replica.start('email')
  acme = await projectWithDomain(client, 'acme')
})
afterAll(async () => {
  await replica.stopAll()
})

const send = (body: unknown, key: string | null = acme.live, idem?: string) =>
  client.post('/v1/emails', key, body, idem === undefined ? undefined : { 'idempotency-key': idem })
const emailsWithKey = async (key: string) =>
  sql(te, 'SELECT id FROM emails WHERE idempotency_key = $1', [key])

/** POST /v1/emails with `Idempotency-Key: <key>` written in UTF-8, as curl sends what it is given. */
async function sendUtf8Key(body: unknown, key: string) {
  const json = JSON.stringify(body)
  const r = await rawExchange(
    Number(new URL(stack.gatewayUrl).port),
    `POST /v1/emails HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${acme.live}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n` +
      `Idempotency-Key: ${key}\r\n\r\n${json}`,
  )
  return { status: r.status, body: JSON.parse(r.body) }
}

describe('idempotency (contract.md part 3)', () => {
  it('an Idempotency-Key header in UTF-8 is the key as written: the same as the body field, 256 characters long', async () => {
    const body = email(acme.from, { to: 'utf8@x.test' })
    const first = await sendUtf8Key(body, 'clé-1')
    expect(first.status).toBe(202)
    // Read as Latin-1 it was "clÃ©-1": another key than the body's, so a second email.
    const again = await send({ ...body, idempotencyKey: 'clé-1' })
    expect(again.body).toEqual({ id: first.body.id, status: 'queued', idempotent: true })
    expect(await emailsWithKey('clé-1')).toHaveLength(1)
    // 256 characters of two bytes each: within the limit (it counted 512 and refused it).
    const long = await sendUtf8Key(email(acme.from, { to: 'utf8-long@x.test' }), 'é'.repeat(256))
    expect(long.status).toBe(202)
    expect(await emailsWithKey('é'.repeat(256))).toHaveLength(1)
  })

  it('the same key and body answer the first result with idempotent: true and the same status', async () => {
    const body = email(acme.from, { to: 'Bob@x.test' })
    const first = await send(body, acme.live, 'k-same')
    expect(first.status).toBe(202)
    expect(first.body.idempotent).toBeUndefined()
    const again = await send(body, acme.live, 'k-same')
    expect(again.status).toBe(202)
    expect(again.body).toEqual({ id: first.body.id, status: 'queued', idempotent: true })
    expect(await emailsWithKey('k-same')).toHaveLength(1)
  })

  it('the canonical body ignores key order and the idempotencyKey field itself', async () => {
    const first = await send(
      { to: 'c@x.test', from: acme.from, subject: 'S', tags: { b: '2', a: '1' }, html: 'h' },
      acme.live,
      'k-order',
    )
    const again = await send(
      {
        html: 'h',
        tags: { a: '1', b: '2' },
        subject: 'S',
        from: acme.from,
        to: 'c@x.test',
        idempotencyKey: 'ignored',
      },
      acme.live,
      'k-order',
    )
    expect(again.body).toEqual({ id: first.body.id, status: 'queued', idempotent: true })
  })

  it('scheduledAt: null is the same request as no scheduledAt, both ways round', async () => {
    const first = await send({ ...email(acme.from), scheduledAt: null }, acme.live, 'k-null-schedule')
    expect(first.status).toBe(202)
    const again = await send(email(acme.from), acme.live, 'k-null-schedule')
    expect([again.status, again.body]).toEqual([
      202,
      { id: first.body.id, status: 'queued', idempotent: true },
    ])
    const plain = await send(email(acme.from), acme.live, 'k-no-schedule')
    const nulled = await send({ ...email(acme.from), scheduledAt: null }, acme.live, 'k-no-schedule')
    expect(nulled.body).toEqual({ id: plain.body.id, status: 'queued', idempotent: true })
  })

  it('a different body under the same key is 409 idempotency_payload_mismatch', async () => {
    await send(email(acme.from), acme.live, 'k-mismatch')
    const r = await send(email(acme.from, { subject: 'Changed' }), acme.live, 'k-mismatch')
    expect(r.status).toBe(409)
    expect(r.body.error).toEqual({
      type: 'conflict',
      code: 'idempotency_payload_mismatch',
      message: expect.any(String),
      param: 'idempotencyKey',
    })
  })

  it('the header wins over the body field', async () => {
    const first = await send(email(acme.from, { idempotencyKey: 'from-body' }), acme.live, 'from-header')
    expect(
      (await sql(te, 'SELECT idempotency_key FROM emails WHERE id = $1', [first.body.id]))[0].idempotency_key,
    ).toBe('from-header')
    const viaBody = await send(email(acme.from, { idempotencyKey: 'from-header' }))
    expect(viaBody.body).toEqual({ id: first.body.id, status: 'queued', idempotent: true })
    const bad = await send(email(acme.from), acme.live, 'x'.repeat(257))
    expect(bad.status).toBe(400)
    expect(bad.body.error).toMatchObject({ code: 'invalid_body', param: 'idempotencyKey' })
  })

  it('keys are per project: another project may use the same key', async () => {
    const beta = await projectWithDomain(client, 'beta')
    const a = await send(email(acme.from), acme.live, 'k-shared')
    const b = await send(email(beta.from), beta.live, 'k-shared')
    expect(b.status).toBe(202)
    expect(b.body.id).not.toBe(a.body.id)
    expect(b.body.idempotent).toBeUndefined()
  })

  it('repeats arriving together from two projects each answer with their own project email', async () => {
    // Concurrent requests share one lookup round trip; keys must still be matched per project.
    const gamma = await projectWithDomain(client, 'gamma')
    const a = await send(email(acme.from), acme.live, 'k-together')
    const g = await send(email(gamma.from), gamma.live, 'k-together')
    const repeats = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        i % 2
          ? send(email(gamma.from), gamma.live, 'k-together')
          : send(email(acme.from), acme.live, 'k-together'),
      ),
    )
    repeats.forEach((r, i) => {
      expect(r.status).toBe(202)
      expect(r.body).toEqual({ id: i % 2 ? g.body.id : a.body.id, status: 'queued', idempotent: true })
    })
  })

  it('a test send repeats with 200 test; a scheduled send repeats with 202 scheduled', async () => {
    const t = await send(email(acme.from), acme.test, 'k-test')
    const t2 = await send(email(acme.from), acme.test, 'k-test')
    expect(t2.status).toBe(200)
    expect(t2.body).toEqual({ id: t.body.id, status: 'test', idempotent: true })
    const body = email(acme.from, { scheduledAt: inSeconds(7200) })
    const s = await send(body, acme.live, 'k-sched')
    const s2 = await send(body, acme.live, 'k-sched')
    expect(s2.status).toBe(202)
    expect(s2.body).toEqual({ id: s.body.id, status: 'scheduled', idempotent: true })
  })

  it('the first answer is repeated even after the email moved on (canceled)', async () => {
    const body = email(acme.from, { to: 'later@x.test' })
    const first = await send(body, acme.live, 'k-moved')
    await client.del(`/v1/emails/${first.body.id}`, acme.live)
    const again = await send(body, acme.live, 'k-moved')
    expect(again.status).toBe(202)
    expect(again.body).toEqual({ id: first.body.id, status: 'queued', idempotent: true })
  })

  it('concurrent duplicates across replicas produce exactly one email', async () => {
    const body = email(acme.from, { to: 'race@x.test' })
    const results = await Promise.all(Array.from({ length: 12 }, () => send(body, acme.live, 'k-race')))
    expect(results.map((r) => r.status)).toEqual(Array(12).fill(202))
    const ids = new Set(results.map((r) => r.body.id))
    expect(ids.size).toBe(1)
    expect(results.filter((r) => r.body.idempotent === undefined)).toHaveLength(1)
    const rows = await emailsWithKey('k-race')
    expect(rows).toHaveLength(1)
    expect(rows[0].id).toBe([...ids][0])
    const events = await sql(te, 'SELECT type FROM email_events WHERE email_id = $1', [rows[0].id])
    expect(events.map((e) => e.type)).toEqual(['email.queued'])
  })

  it('concurrent duplicates past the daily limit are all refused by it, none fails', async () => {
    const full = await projectWithDomain(client, 'full', 'full.test', { dailyLimit: 1 })
    const body = email(full.from, { to: 'late@x.test' })
    expect((await send(email(full.from), full.live)).status).toBe(202)
    const answers = await Promise.all(Array.from({ length: 20 }, () => send(body, full.live, 'k-at-limit')))
    for (const a of answers) {
      expect(a.status).toBe(429)
      expect(a.body.error.code).toBe('daily_limit_exceeded')
    }
    expect(await emailsWithKey('k-at-limit')).toEqual([])
  })

  it('concurrent duplicate batches make one email per item key', async () => {
    const items = [email(acme.from, { to: 'b0@x.test' }), email(acme.from, { to: 'b1@x.test' })]
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        client.post('/v1/emails/batch', acme.live, items, { 'idempotency-key': 'race-batch' }),
      ),
    )
    for (const r of results) expect(r.status).toBe(200)
    expect(new Set(results.map((r) => r.body.data[0].id)).size).toBe(1)
    expect(new Set(results.map((r) => r.body.data[1].id)).size).toBe(1)
    expect(await emailsWithKey('race-batch:0')).toHaveLength(1)
    expect(await emailsWithKey('race-batch:1')).toHaveLength(1)
  })
})
