import { access, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { waitFor } from '@mailer/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { email, inSeconds, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

/*
 * A faked delivery event (POST /v1/admin/dev/events) against an email the platform has not
 * finished with: it must neither strand the recipients still waiting to be sent nor bring a
 * canceled email back to life.
 */
const dir = join(tmpdir(), `mailer-dev-states-${process.pid}-${Date.now()}`)
// No dispatcher yet: the emails stay queued until the test starts one.
const { stack, client } = useStack(['auth', 'email', 'gateway'], {
  env: { DEV_ROUTES: 'true' },
  after: () => rm(dir, { recursive: true, force: true }),
})
let acme: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
})

const send = async (over: Record<string, unknown>) => {
  const r = await client.post('/v1/emails', acme.live, email(acme.from, over))
  if (r.status !== 202) throw new Error(`send: ${r.status} ${JSON.stringify(r.body)}`)
  return r.body.id as string
}
const fake = (emailId: string, type: string, recipient?: string) =>
  client.post('/v1/admin/dev/events', client.admin, { emailId, type, ...(recipient ? { recipient } : {}) })
const get = async (id: string) => (await client.get(`/v1/emails/${id}`, acme.live)).body
const statuses = (e: any) => e.recipients.map((r: any) => [r.address, r.status])

describe('a faked event on an email still in progress', () => {
  it('keeps it queued while a recipient still waits, so the dispatcher still sends to them', async () => {
    const id = await send({ to: ['first@example.com', 'second@example.com'] })
    expect((await fake(id, 'email.bounced')).status).toBe(201)
    const after = await get(id)
    expect(after.status).toBe('queued')
    expect(statuses(after)).toEqual([
      ['first@example.com', 'bounced'],
      ['second@example.com', 'queued'],
    ])

    const scheduled = await send({ to: ['a@example.com', 'b@example.com'], scheduledAt: inSeconds(3600) })
    expect((await fake(scheduled, 'email.delivered')).status).toBe(201)
    expect((await get(scheduled)).status).toBe('scheduled')

    await stack.start('dispatcher', { MAIL_TRANSPORT: 'file', MAIL_OUTBOX_DIR: dir })
    const done = await waitFor(
      async () => {
        const e = await get(id)
        return e.status === 'queued' || e.status === 'sending' ? null : e
      },
      { what: 'the email finished', timeoutMs: 20_000 },
    )
    // The second recipient was sent to; the email ends as the contract derives it (any bounced).
    await access(join(dir, `${id}.eml`))
    expect(statuses(done)).toEqual([
      ['first@example.com', 'bounced'],
      ['second@example.com', 'delivered'],
    ])
    expect(done.status).toBe('bounced')
  })

  it('derives the final status once every recipient is final', async () => {
    await stack.stop('dispatcher')
    const id = await send({ to: 'only@example.com' })
    expect((await fake(id, 'email.bounced')).status).toBe(201)
    expect((await get(id)).status).toBe('bounced')
  })

  it('leaves a canceled email canceled', async () => {
    const id = await send({ to: ['c1@example.com', 'c2@example.com'] })
    expect((await client.del(`/v1/emails/${id}`, acme.live)).status).toBe(200)
    for (const recipient of ['c1@example.com', 'c2@example.com']) {
      expect((await fake(id, 'email.delivered', recipient)).status).toBe(201)
    }
    const after = await get(id)
    expect(after.status).toBe('canceled')
    expect(after.sentAt).toBeNull()
    expect(after.deliveredAt).toBeNull()
    // The fake is still on the timeline.
    expect(after.events.map((e: any) => e.type)).toEqual([
      'email.queued',
      'email.canceled',
      'email.delivered',
      'email.delivered',
    ])
  })
})
