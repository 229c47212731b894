import { createPgPool, type PgPool } from '@mailer/db'
import { waitFor } from '@mailer/testing'
import { connect, type NatsConnection } from 'nats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { claimEmails } from '../../services/dispatcher/src/infra/claim.js'
import { sql } from '../support/db.js'
import { email, inSeconds, projectWithDomain } from '../support/emails.js'
import { mailerRpc } from '../support/rpc.js'
import { useStack } from '../support/use-stack.js'

/*
 * What a canceled email's recipients read as, in every view that shows them (the project route,
 * the admin routes, RPC), and what a cancel racing the dispatcher's claim leaves behind.
 */
const { te, client } = useStack(['auth', 'email', 'gateway'])
let acme: Awaited<ReturnType<typeof projectWithDomain>>
let nc: NatsConnection
let pool: PgPool

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
  nc = await connect({ servers: te.natsUrl })
  pool = createPgPool(te.databaseUrl, { max: 4 })
})
afterAll(async () => {
  await nc?.close()
  await pool?.end()
})

const send = (over: Record<string, unknown> = {}) =>
  client.post('/v1/emails', acme.live, email(acme.from, over))
const get = async (id: string) => (await client.get(`/v1/emails/${id}`, acme.live)).body
const statuses = (e: any) => e.recipients.map((r: any) => [r.address, r.status])

const rpc = (method: string, ...args: unknown[]) => mailerRpc(nc, te.natsPrefix, 'acme', method, ...args)

/** The backend pid of a session that waits for a lock `blocker` holds, once there is one. */
const waiterOf = (blocker: number) =>
  waitFor(async () => {
    const { rows } = await pool.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))',
      [blocker],
    )
    return rows[0]?.pid ?? null
  })

describe("a canceled email's recipients", () => {
  it('read canceled, as of the cancel, on the project route, the admin routes and RPC', async () => {
    const r = await send({
      to: ['alice@example.com', 'bob@example.com'],
      cc: 'carol@example.com',
      bcc: 'dave@example.com',
      scheduledAt: inSeconds(3600),
    })
    expect((await client.del(`/v1/emails/${r.body.id}`, acme.live)).body.status).toBe('canceled')
    const e = await get(r.body.id)
    expect(e.status).toBe('canceled')
    expect(statuses(e)).toEqual([
      ['alice@example.com', 'canceled'],
      ['bob@example.com', 'canceled'],
      ['carol@example.com', 'canceled'],
      ['dave@example.com', 'canceled'],
    ])
    const canceledAt = e.events.find((x: any) => x.type === 'email.canceled').createdAt
    expect(e.recipients.map((x: any) => x.lastEventAt)).toEqual(Array(4).fill(canceledAt))
    for (const path of [`/v1/admin/emails/${r.body.id}`, `/v1/admin/projects/acme/emails/${r.body.id}`]) {
      expect((await client.get(path, client.admin)).body.recipients).toEqual(e.recipients)
    }

    // A queued email canceled over RPC, read back over RPC.
    const q = await send()
    expect(await rpc('cancel', q.body.id)).toEqual({ id: q.body.id, status: 'canceled' })
    expect(statuses(await rpc('get', q.body.id))).toEqual([['alice@example.com', 'canceled']])

    // The status filter goes by the email's status: a canceled email is listed as canceled only.
    const ids = async (status: string) =>
      (await client.get(`/v1/emails?status=${status}&limit=100`, acme.live)).body.data.map((x: any) => x.id)
    expect(await ids('canceled')).toEqual(expect.arrayContaining([r.body.id, q.body.id]))
    for (const s of ['queued', 'scheduled', 'delivered', 'bounced'])
      expect(await ids(s)).not.toContain(q.body.id)
  })

  it("that were deferred (an email a platform-limit answer put back to queued) are canceled too, keeping the relay's answer", async () => {
    const r = await send({ to: ['alice@example.com', 'bob@example.com'] })
    await sql(te, "UPDATE emails SET status = 'queued', attempts = 1 WHERE id = $1", [r.body.id])
    await sql(
      te,
      `UPDATE email_recipients SET status = 'deferred', smtp_status = 421, smtp_response = '421 4.7.0 Try later'
       WHERE email_id = $1 AND address = 'bob@example.com'`,
      [r.body.id],
    )
    expect((await client.del(`/v1/emails/${r.body.id}`, acme.live)).status).toBe(200)
    const e = await get(r.body.id)
    expect(statuses(e)).toEqual([
      ['alice@example.com', 'canceled'],
      ['bob@example.com', 'canceled'],
    ])
    expect(e.recipients[1]).toMatchObject({ smtpStatus: 421, smtpResponse: '421 4.7.0 Try later' })
  })

  it('read canceled, as of the cancel, when an earlier release canceled the email and left them waiting', async () => {
    const r = await send({ to: ['alice@example.com', 'bob@example.com'] })
    await client.del(`/v1/emails/${r.body.id}`, acme.live)
    // What the cancel of earlier releases stored: the email canceled, its recipients untouched.
    await sql(te, "UPDATE email_recipients SET status = 'queued', last_event_at = NULL WHERE email_id = $1", [
      r.body.id,
    ])
    await sql(
      te,
      "UPDATE email_recipients SET status = 'deferred' WHERE email_id = $1 AND address = 'bob@example.com'",
      [r.body.id],
    )
    const canceledAt = (await sql(te, 'SELECT canceled_at FROM emails WHERE id = $1', [r.body.id]))[0]
      .canceled_at
    const e = await get(r.body.id)
    expect(e.recipients.map((x: any) => [x.status, x.lastEventAt])).toEqual([
      ['canceled', canceledAt.toISOString()],
      ['canceled', canceledAt.toISOString()],
    ])
  })
})

describe('a cancel racing the dispatcher', () => {
  it('that arrives while a claim is being taken is refused once it commits, and changes no recipient', async () => {
    const r = await send({ to: ['alice@example.com', 'bob@example.com'] })
    const holder = await pool.connect()
    let cancel: ReturnType<typeof client.del<any>> | undefined
    try {
      await holder.query('BEGIN')
      // The dispatcher's claim, not yet committed.
      await holder.query(
        "UPDATE emails SET status = 'sending', claimed_at = now(), attempts = attempts + 1 WHERE id = $1",
        [r.body.id],
      )
      const pid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid
      cancel = client.del(`/v1/emails/${r.body.id}`, acme.live)
      await waiterOf(pid)
      await holder.query('COMMIT')
    } finally {
      holder.release()
    }
    const refused = await cancel
    expect(refused.status).toBe(409)
    expect(refused.body.error.code).toBe('not_cancelable')
    const e = await get(r.body.id)
    expect(e.status).toBe('sending')
    expect(statuses(e)).toEqual([
      ['alice@example.com', 'queued'],
      ['bob@example.com', 'queued'],
    ])
    expect(e.events.map((x: any) => x.type)).toEqual(['email.queued'])
  })

  it('that a claim arrives during is not undone: the claim skips the canceled email, every recipient is canceled', async () => {
    const r = await send({ to: ['alice@example.com', 'bob@example.com'] })
    const holder = await pool.connect()
    let cancel: ReturnType<typeof client.del<any>> | undefined
    let claim: ReturnType<typeof claimEmails> | undefined
    try {
      await holder.query('BEGIN')
      // Holds the recipients, so the cancel stops inside its transaction, after taking the email.
      await holder.query('SELECT 1 FROM email_recipients WHERE email_id = $1 FOR UPDATE', [r.body.id])
      const pid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid
      cancel = client.del(`/v1/emails/${r.body.id}`, acme.live)
      const canceling = await waiterOf(pid)
      claim = claimEmails(pool, [r.body.id], 60)
      await waiterOf(canceling)
      await holder.query('COMMIT')
    } finally {
      holder.release()
    }
    expect((await cancel).body).toEqual({ id: r.body.id, status: 'canceled' })
    expect(await claim).toEqual([{ kind: 'skip', status: 'canceled' }])
    const e = await get(r.body.id)
    expect(e.status).toBe('canceled')
    expect(e.attempts).toBe(0)
    expect(statuses(e)).toEqual([
      ['alice@example.com', 'canceled'],
      ['bob@example.com', 'canceled'],
    ])
  })
})
