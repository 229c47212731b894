import { waitFor } from '@mailer/testing'
import { describe, expect, it } from 'vitest'
import { email, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// The idempotency keys of a broadcast's emails against the keys API users choose: a broadcast
// emails each of its contacts whatever keys the project's own sends took, and a send never
// answers with a broadcast's email, whatever key it carries.
const { client } = useStack(['auth', 'email', 'broadcast', 'gateway'], {
  env: {
    BROADCAST_POLL_MS: '50',
    BROADCAST_RESUME_SECONDS: '1',
    BROADCAST_LEASE_SECONDS: '2',
  },
})

type Project = Awaited<ReturnType<typeof projectWithDomain>>

/** A draft to a new audience of `addresses`, and the audience's contacts by address. */
async function draftTo(p: Project, addresses: string[]) {
  const audienceId = (await client.post('/v1/audiences', p.live, { name: `To ${addresses[0]}` })).body.id
  for (const address of addresses)
    await client.post(`/v1/contacts/import?audienceId=${audienceId}`, p.live, [{ email: address }])
  const b = await client.post('/v1/broadcasts', p.live, {
    audienceId,
    from: p.from,
    subject: 'News',
    html: '<p>News</p><a href="{{unsubscribe_url}}">Unsubscribe</a>',
  })
  expect(b.status).toBe(201)
  return { id: b.body.id as string, audienceId, contacts: await contactsOf(p, audienceId) }
}

const contactsOf = async (p: Project, audienceId: string): Promise<Record<string, string>> =>
  Object.fromEntries(
    (await client.get(`/v1/contacts?audienceId=${audienceId}`, p.live)).body.data.map((c: any) => [
      c.email,
      c.id,
    ]),
  )

const until = (p: Project, id: string, status: string) =>
  waitFor(
    async () => {
      const r = await client.get(`/v1/broadcasts/${id}`, p.live)
      return r.body.status === status ? r.body : null
    },
    { timeoutMs: 20_000, what: `broadcast ${id} ${status}` },
  )

/** The addresses the broadcast's emails went to, one entry per email. */
const sentTo = async (p: Project, id: string): Promise<string[]> =>
  (await client.get(`/v1/emails?tag=broadcast_id:${id}`, p.live)).body.data.map((e: any) => e.to[0]).sort()

describe('idempotency keys of API sends and of broadcasts', () => {
  it("a send's key never takes a contact's email, and never answers with a broadcast's email", async () => {
    const p = await projectWithDomain(client, 'keys', 'keys.test')
    const b = await draftTo(p, ['ann@example.com', 'bob@example.com'])
    const ann = b.contacts['ann@example.com']!
    const bob = b.contacts['bob@example.com']!

    // Keys of the shape the contract gives a broadcast's emails, and with the address in place of
    // the contact id, taken by the project's own sends before the broadcast goes out (header and
    // body field alike).
    const header = `bc:${b.id}:${ann}`
    const byHeader = await client.post(
      '/v1/emails',
      p.live,
      email(p.from, { to: 'me@example.org', subject: 'Mine' }),
      { 'Idempotency-Key': header },
    )
    expect(byHeader.status).toBe(202)
    const byField = await client.post(
      '/v1/emails',
      p.live,
      email(p.from, { to: 'me@example.org', idempotencyKey: `bc:${b.id}:bob@example.com` }),
    )
    expect(byField.status).toBe(202)

    expect((await client.post(`/v1/broadcasts/${b.id}/send`, p.live)).status).toBe(202)
    expect((await until(p, b.id, 'sent')).counts).toEqual({ queued: 2 })
    expect(await sentTo(p, b.id)).toEqual(['ann@example.com', 'bob@example.com'])

    // The send's key is still its own: the same request answers its own email again.
    const again = await client.post(
      '/v1/emails',
      p.live,
      email(p.from, { to: 'me@example.org', subject: 'Mine' }),
      { 'Idempotency-Key': header },
    )
    expect(again.body).toEqual({ id: byHeader.body.id, status: 'queued', idempotent: true })

    // A key of a contact's email, first used by the project after the broadcast, sends a new email.
    const broadcastIds = new Set(
      (await client.get(`/v1/emails?tag=broadcast_id:${b.id}`, p.live)).body.data.map((e: any) => e.id),
    )
    for (const key of [`bc:${b.id}:${bob}`, `bc:${b.id}:ann@example.com`]) {
      // A dry run reads the keys before it answers (a send near its limits does too).
      const dry = await client.post(
        '/v1/emails?dryRun=true',
        p.live,
        email(p.from, { to: 'me@example.org' }),
        {
          'Idempotency-Key': key,
        },
      )
      expect(dry.body, key).toEqual({ id: null, status: 'queued' })
      const r = await client.post('/v1/emails', p.live, email(p.from, { to: 'me@example.org' }), {
        'Idempotency-Key': key,
      })
      expect(r.status, key).toBe(202)
      expect(r.body.idempotent, key).toBeUndefined()
      expect(broadcastIds.has(r.body.id), key).toBe(false)
      const got = await client.get(`/v1/emails/${r.body.id}`, p.live)
      expect(got.body).toMatchObject({ source: 'http', to: ['me@example.org'], tags: {} })
    }
  })
})
