import type { Caller } from '@mailer/contracts'
import { createDb, type Db } from '@mailer/db'
import { waitFor } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { planSend } from '../../services/broadcast/src/domain/broadcast-state.js'
import { findBroadcast, markSent } from '../../services/broadcast/src/infra/broadcast-store.js'
import { projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// A send checks the draft (sender domain, templates, size) and then marks it sent. A PATCH landing
// between the two must not go out unchecked: the mark holds only for the content that was checked.
// Sends racing each other: the mark is conditional on the draft, so one wins.
const { te, client } = useStack(['auth', 'email', 'broadcast', 'gateway'])
let acme: Awaited<ReturnType<typeof projectWithDomain>>
let db: Db

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme', 'news.acme.test')
  db = createDb(te.databaseUrl)
})
afterAll(async () => {
  await db.$disconnect()
})

describe('a broadcast changed while its send is checked', () => {
  it('is not marked sent with the content the check did not see, and a send checks it again', async () => {
    const audienceId = (await client.post('/v1/audiences', acme.live, { name: 'All' })).body.id
    const created = await client.post('/v1/broadcasts', acme.live, {
      audienceId,
      from: acme.from,
      subject: 'Checked',
      html: '<p>Hi</p><a href="{{unsubscribe_url}}">Unsubscribe</a>',
    })
    expect(created.status).toBe(201)
    const project = (await client.get('/v1/me', acme.live)).body.project
    const caller: Caller = {
      requestId: 'req_race',
      via: 'admin',
      project: { ...project, defaultFrom: null },
      apiKeyId: null,
      mode: 'live',
    }
    // What the send check read; then a PATCH lands before the mark.
    const checked = await findBroadcast(db, project.id, created.body.id)
    const patched = await client.patch(`/v1/broadcasts/${created.body.id}`, acme.live, {
      subject: 'Unchecked',
    })
    expect(patched.status).toBe(200)

    expect(await markSent(db, caller, checked, planSend(undefined, new Date()))).toBeNull()
    const still = await client.get(`/v1/broadcasts/${created.body.id}`, acme.live)
    expect(still.body).toMatchObject({ status: 'draft', subject: 'Unchecked' })

    // The route reads and checks the draft as it is now, then sends it.
    const sent = await client.post(`/v1/broadcasts/${created.body.id}/send`, acme.live)
    expect(sent.body).toMatchObject({ status: 'sending', subject: 'Unchecked' })
  })
})

describe('concurrent sends of one draft', () => {
  it('exactly one is accepted; the others are 409 broadcast_not_draft, and each contact gets one email', async () => {
    const audienceId = (await client.post('/v1/audiences', acme.live, { name: 'Raced' })).body.id
    await client.post(`/v1/contacts/import?audienceId=${audienceId}`, acme.live, [
      { email: 'one@example.com' },
      { email: 'two@example.com' },
    ])
    const b = await client.post('/v1/broadcasts', acme.live, {
      audienceId,
      from: acme.from,
      subject: 'Once',
      html: '<p>Once</p>',
    })
    const sends = await Promise.all(
      Array.from({ length: 6 }, () => client.post(`/v1/broadcasts/${b.body.id}/send`, acme.live)),
    )
    expect(sends.map((r) => r.status).sort()).toEqual([202, 409, 409, 409, 409, 409])
    for (const r of sends.filter((x) => x.status === 409))
      expect(r.body.error).toMatchObject({ type: 'conflict', code: 'broadcast_not_draft' })
    const done = await waitFor(
      async () => {
        const r = await client.get(`/v1/broadcasts/${b.body.id}`, acme.live)
        return r.body.status === 'sent' ? r.body : null
      },
      { timeoutMs: 15_000, what: 'broadcast sent' },
    )
    expect(done.counts).toEqual({ queued: 2 })
  })
})
