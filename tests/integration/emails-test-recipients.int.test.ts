import { connect, type NatsConnection } from 'nats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../support/db.js'
import { email, inSeconds, projectWithDomain } from '../support/emails.js'
import { mailerRpc } from '../support/rpc.js'
import { useStack } from '../support/use-stack.js'

/*
 * What a test-mode email's recipients read as (sent with a test key: stored with status `test`,
 * never relayed), in every view that shows them: the project route (with either key), the admin
 * routes and RPC; for emails stored now and for those an earlier release stored.
 */
const { te, client } = useStack(['auth', 'email', 'gateway'], { env: { DEV_ROUTES: 'true' } })
let acme: Awaited<ReturnType<typeof projectWithDomain>>
let nc: NatsConnection

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
  nc = await connect({ servers: te.natsUrl })
})
afterAll(async () => {
  await nc?.close()
})

const sendTest = async (over: Record<string, unknown> = {}) => {
  const r = await client.post('/v1/emails', acme.test, email(acme.from, over))
  if (r.status !== 200 || r.body.status !== 'test')
    throw new Error(`send: ${r.status} ${JSON.stringify(r.body)}`)
  return r.body.id as string
}
const get = async (id: string, key = acme.test) => (await client.get(`/v1/emails/${id}`, key)).body
const statuses = (e: any) => e.recipients.map((r: any) => [r.address, r.status])

const rpc = (method: string, ...args: unknown[]) => mailerRpc(nc, te.natsPrefix, 'acme', method, ...args)

/** Every other view of one email's recipients agrees with the project route's. */
async function expectSameEverywhere(id: string, recipients: unknown) {
  expect((await get(id, acme.live)).recipients).toEqual(recipients)
  for (const path of [`/v1/admin/emails/${id}`, `/v1/admin/projects/acme/emails/${id}`]) {
    expect((await client.get(path, client.admin)).body.recipients).toEqual(recipients)
  }
  expect((await rpc('get', id)).recipients).toEqual(recipients)
}

describe("a test email's recipients", () => {
  it('read test, as of the email.test event, in every view', async () => {
    const id = await sendTest({
      to: ['alice@example.com', 'bob@example.com'],
      cc: 'carol@example.com',
      bcc: 'dave@example.com',
    })
    const e = await get(id)
    expect(e.status).toBe('test')
    expect(statuses(e)).toEqual([
      ['alice@example.com', 'test'],
      ['bob@example.com', 'test'],
      ['carol@example.com', 'test'],
      ['dave@example.com', 'test'],
    ])
    const at = e.events.find((x: any) => x.type === 'email.test').createdAt
    expect(at).toBe(e.createdAt)
    expect(e.recipients.map((x: any) => x.lastEventAt)).toEqual(Array(4).fill(at))
    await expectSameEverywhere(id, e.recipients)
    // Stored so, not only shown so: whatever reads the table (a later release, an operator's
    // query) finds the same.
    const rows = await sql(te, 'SELECT status, last_event_at FROM email_recipients WHERE email_id = $1', [id])
    expect(rows.map((x) => [x.status, x.last_event_at.toISOString()])).toEqual(Array(4).fill(['test', at]))
  })

  it('read test for a scheduled test send and for each item of a test batch', async () => {
    const scheduled = await sendTest({ scheduledAt: inSeconds(3600) })
    expect(statuses(await get(scheduled))).toEqual([['alice@example.com', 'test']])

    const batch = await client.post('/v1/emails/batch', acme.test, [
      email(acme.from, { to: 'one@example.com' }),
      email(acme.from, { to: ['two@example.com', 'three@example.com'] }),
    ])
    expect(batch.status).toBe(200)
    const [first, second] = batch.body.data.map((x: any) => x.id)
    expect(statuses(await get(first))).toEqual([['one@example.com', 'test']])
    expect(statuses(await get(second))).toEqual([
      ['two@example.com', 'test'],
      ['three@example.com', 'test'],
    ])
  })

  it('read test when an earlier release stored them queued', async () => {
    const id = await sendTest({ to: ['alice@example.com', 'bob@example.com'] })
    // What the accept path of earlier releases stored: the recipients with the column defaults.
    await sql(te, "UPDATE email_recipients SET status = 'queued', last_event_at = NULL WHERE email_id = $1", [
      id,
    ])
    const e = await get(id)
    expect(e.recipients.map((x: any) => [x.address, x.status, x.lastEventAt])).toEqual([
      ['alice@example.com', 'test', e.createdAt],
      ['bob@example.com', 'test', e.createdAt],
    ])
    await expectSameEverywhere(id, e.recipients)
  })

  it('still follow a fake from the dev route, while the email stays test', async () => {
    const id = await sendTest({ to: ['alice@example.com', 'bob@example.com'] })
    const r = await client.post('/v1/admin/dev/events', client.admin, {
      emailId: id,
      type: 'email.delivered',
    })
    expect(r.status).toBe(201)
    const e = await get(id)
    expect(e.status).toBe('test')
    expect(statuses(e)).toEqual([
      ['alice@example.com', 'delivered'],
      ['bob@example.com', 'test'],
    ])
  })

  it('leave live emails as they were: queued until the dispatcher answers', async () => {
    const live = await client.post(
      '/v1/emails',
      acme.live,
      email(acme.from, { scheduledAt: inSeconds(3600) }),
    )
    expect(live.status).toBe(202)
    const e = await get(live.body.id, acme.live)
    expect(e.status).toBe('scheduled')
    expect(e.recipients.map((x: any) => [x.status, x.lastEventAt])).toEqual([['queued', null]])
  })
})
