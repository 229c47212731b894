import { SUBJECTS } from '@mailer/contracts'
import { connect } from 'nats'
import { beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../support/db.js'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'

// Contacts and audiences through the gateway, owned by the broadcast service.
const { te, client } = useStack(['auth', 'broadcast', 'gateway'])
let acme: Awaited<ReturnType<typeof createProject>>
let other: Awaited<ReturnType<typeof createProject>>

beforeAll(async () => {
  acme = await createProject(client, 'acme')
  other = await createProject(client, 'other')
})

const ID = /^ct_[0-9A-Z]{26}$/

describe('contacts', () => {
  it('creates with 201, upserts by email (lower-cased) and keeps fields left out', async () => {
    const c = await client.post('/v1/contacts', acme.live, {
      email: 'Ann@Example.com',
      firstName: 'Ann',
      data: { plan: 'pro' },
    })
    expect(c.status).toBe(201)
    expect(c.body).toMatchObject({
      email: 'ann@example.com',
      firstName: 'Ann',
      lastName: null,
      unsubscribed: false,
      data: { plan: 'pro' },
    })
    expect(c.body.id).toMatch(ID)

    const again = await client.post('/v1/contacts', acme.live, { email: 'ann@example.com', lastName: 'Lee' })
    expect(again.status).toBe(201)
    expect(again.body).toMatchObject({
      id: c.body.id,
      firstName: 'Ann',
      lastName: 'Lee',
      data: { plan: 'pro' },
    })

    const got = await client.get(`/v1/contacts/${c.body.id}`, acme.live)
    expect(got.body).toEqual(again.body)
    // Another project cannot see it, and has its own contact with the same email.
    expect((await client.get(`/v1/contacts/${c.body.id}`, other.live)).status).toBe(404)
    const theirs = await client.post('/v1/contacts', other.live, { email: 'ann@example.com' })
    expect(theirs.body.id).not.toBe(c.body.id)
  })

  it('rejects bad input with the contract errors', async () => {
    for (const [body, code, param] of [
      [{ email: 'not-an-address' }, 'invalid_body', 'email'],
      [{ firstName: 'x' }, 'invalid_body', 'email'],
      [{ email: 'a@b.test', unsubscribed: 'yes' }, 'invalid_body', 'unsubscribed'],
      [{ email: 'a@b.test', data: [1, 2] }, 'invalid_body', 'data'],
      [{ email: 'a@b.test', data: { big: 'x'.repeat(20_000) } }, 'invalid_body', 'data'],
      [{ email: 'a@b.test', audienceIds: ['aud_nope'] }, 'audience_not_found', 'audienceIds.0'],
    ] as const) {
      const r = await client.post('/v1/contacts', acme.live, body)
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(code === 'audience_not_found' ? 404 : 400)
      expect(r.body.error).toMatchObject({ code, param })
    }
    const unknown = await client.post('/v1/contacts', acme.live, { email: 'a@b.test', nickname: 'x' })
    expect(unknown.body.error.code).toBe('invalid_body')
    const none = await client.call('POST', '/v1/contacts', { key: acme.live })
    expect(none.body.error.code).toBe('missing_body')
    expect((await client.get('/v1/contacts/ct_nope', acme.live)).body.error.code).toBe('contact_not_found')
  })

  it('changes and deletes a contact; the email cannot change', async () => {
    const c = await client.post('/v1/contacts', acme.live, { email: 'bob@example.com', firstName: 'Bob' })
    const p = await client.patch(`/v1/contacts/${c.body.id}`, acme.live, {
      firstName: null,
      unsubscribed: true,
      data: { vip: true },
    })
    expect(p.status).toBe(200)
    expect(p.body).toMatchObject({ firstName: null, unsubscribed: true, data: { vip: true } })
    const bad = await client.patch(`/v1/contacts/${c.body.id}`, acme.live, { email: 'x@y.test' })
    expect(bad.body.error.code).toBe('invalid_body')
    expect((await client.patch('/v1/contacts/ct_nope', acme.live, {})).status).toBe(404)

    const d = await client.del(`/v1/contacts/${c.body.id}`, acme.live)
    expect(d.body).toEqual({ id: c.body.id, deleted: true })
    expect((await client.get(`/v1/contacts/${c.body.id}`, acme.live)).status).toBe(404)
    expect((await client.del(`/v1/contacts/${c.body.id}`, acme.live)).status).toBe(404)
  })

  it('takes null as "keep" on upsert and import, and PATCH data null clears the data', async () => {
    const c = await client.post('/v1/contacts', acme.live, {
      email: 'nulls@example.com',
      unsubscribed: true,
      data: { plan: 'pro' },
    })
    const kept = await client.post('/v1/contacts', acme.live, {
      email: 'nulls@example.com',
      firstName: 'Nell',
      unsubscribed: null,
      data: null,
    })
    expect(kept.status).toBe(201)
    expect(kept.body).toMatchObject({
      id: c.body.id,
      firstName: 'Nell',
      unsubscribed: true,
      data: { plan: 'pro' },
    })
    const imported = await client.post('/v1/contacts/import', acme.live, [
      { email: 'nulls@example.com', lastName: 'Null', unsubscribed: null, data: null },
    ])
    expect(imported.body).toEqual({ created: 0, updated: 1 })
    const cleared = await client.patch(`/v1/contacts/${c.body.id}`, acme.live, { data: null })
    expect(cleared.status).toBe(200)
    expect(cleared.body).toMatchObject({ lastName: 'Null', unsubscribed: true, data: {} })
    // PATCH sets what it is given: there is no "unknown" subscription state to set.
    const bad = await client.patch(`/v1/contacts/${c.body.id}`, acme.live, { unsubscribed: null })
    expect(bad.body.error).toMatchObject({ code: 'invalid_body', param: 'unsubscribed' })
  })

  it('an upsert racing the deletion of the same contact always answers 201 with a contact', async () => {
    for (let round = 0; round < 60; round++) {
      const first = await client.post('/v1/contacts', acme.live, {
        email: 'racer@example.com',
        firstName: `R${round}`,
      })
      const [upsert, del] = await Promise.all([
        client.post('/v1/contacts', acme.live, { email: 'racer@example.com', lastName: 'Again' }),
        client.del(`/v1/contacts/${first.body.id}`, acme.live),
      ])
      expect(upsert.status).toBe(201)
      expect(upsert.body).toMatchObject({ email: 'racer@example.com', lastName: 'Again' })
      expect(del.status).toBe(200)
    }
  })

  it('imports up to 5,000 contacts in one request, counting created and updated', async () => {
    const contacts = Array.from({ length: 5000 }, (_, i) => ({
      email: `user${i}@bulk.test`,
      firstName: `U${i}`,
    }))
    const first = await client.post('/v1/contacts/import', acme.live, contacts)
    expect(first.status).toBe(200)
    expect(first.body).toEqual({ created: 5000, updated: 0 })

    // Half known, half new, and one email twice (merged into one contact).
    const second = await client.post('/v1/contacts/import', acme.live, [
      ...contacts.slice(0, 2).map((c) => ({ email: c.email.toUpperCase(), lastName: 'Known' })),
      { email: 'fresh@bulk.test' },
      { email: 'fresh@bulk.test', unsubscribed: true },
    ])
    expect(second.body).toEqual({ created: 1, updated: 2 })
    const known = await client.get('/v1/contacts?q=user1@bulk.test&limit=1', acme.live)
    expect(known.body.data[0]).toMatchObject({ email: 'user1@bulk.test', firstName: 'U1', lastName: 'Known' })
    const fresh = await client.get('/v1/contacts?q=fresh@', acme.live)
    expect(fresh.body.data).toMatchObject([{ email: 'fresh@bulk.test', unsubscribed: true }])

    for (const [body, param] of [
      [[], undefined],
      [contacts.concat({ email: 'one-too-many@bulk.test', firstName: 'x' }), undefined],
      [[{ email: 'ok@bulk.test' }, { email: 'nope' }], '1.email'],
      [{ contacts }, undefined],
    ] as const) {
      const r = await client.post('/v1/contacts/import', acme.live, body)
      expect(r.status).toBe(400)
      expect(r.body.error.code).toBe('invalid_body')
      if (param) expect(r.body.error.param).toBe(param)
    }
    // A rejected import stores nothing.
    expect((await client.get('/v1/contacts?q=ok@bulk.test', acme.live)).body.data).toEqual([])
  })

  it('lists newest first with cursor pages and searches email and names', async () => {
    const page1 = await client.get('/v1/contacts?limit=3&q=bulk.test', acme.live)
    expect(page1.body.data).toHaveLength(3)
    expect(page1.body.nextCursor).toEqual(expect.any(String))
    const page2 = await client.get(
      `/v1/contacts?limit=3&q=bulk.test&cursor=${page1.body.nextCursor}`,
      acme.live,
    )
    const ids = [...page1.body.data, ...page2.body.data].map((c: any) => c.id)
    expect(new Set(ids).size).toBe(6)
    expect(ids).toEqual([...ids].sort().reverse())
    const byName = await client.get('/v1/contacts?q=u4999', acme.live)
    expect(byName.body.data.map((c: any) => c.email)).toEqual(['user4999@bulk.test'])
    // LIKE wildcards in q are taken literally.
    expect((await client.get('/v1/contacts?q=%25', acme.live)).body.data).toEqual([])
    for (const q of ['limit=0', 'limit=101', 'cursor=garbage', 'audienceId=aud_x']) {
      const r = await client.get(`/v1/contacts?${q}`, acme.live)
      expect(r.status, q).toBe(q.startsWith('audienceId') ? 404 : 400)
    }
  })

  it('trims q as it trims emails, and a blank q (a cleared search box) filters nothing', async () => {
    const emails = async (path: string) => {
      const r = await client.get(path, acme.live)
      expect(r.status, path).toBe(200)
      return r.body.data.map((c: any) => c.email)
    }
    // A pasted address with spaces or a line break around it finds the contact.
    expect(await emails('/v1/contacts?q=%20user4999@bulk.test%0A')).toEqual(['user4999@bulk.test'])
    const all = await emails('/v1/contacts?limit=5')
    expect(all).toHaveLength(5)
    expect(await emails('/v1/contacts?limit=5&q=')).toEqual(all)
    expect(await emails('/v1/contacts?limit=5&q=%20%20')).toEqual(all)
    // An audience's members take the same q (a project of their own: the lists below stay as they are).
    const p = await createProject(client, 'blank-q')
    const aud = (await client.post('/v1/audiences', p.live, { name: 'Members' })).body.id
    const ann = (await client.post('/v1/contacts', p.live, { email: 'blank-q@example.com' })).body.id
    await client.post(`/v1/audiences/${aud}/contacts`, p.live, { contactIds: [ann] })
    for (const q of ['', '%20', '%20BLANK-Q%20']) {
      const r = await client.get(`/v1/audiences/${aud}/contacts?q=${q}`, p.live)
      expect(r.status, q).toBe(200)
      expect(r.body.data.map((c: any) => c.email)).toEqual(['blank-q@example.com'])
    }
  })
})

describe('audiences', () => {
  it('creates, renames, lists and guards names per project', async () => {
    const a = await client.post('/v1/audiences', acme.live, { name: 'Newsletter' })
    expect(a.status).toBe(201)
    expect(a.body).toMatchObject({ name: 'Newsletter', contactCount: 0 })
    expect(a.body.id).toMatch(/^aud_[0-9A-Z]{26}$/)
    const dup = await client.post('/v1/audiences', acme.live, { name: 'Newsletter' })
    expect(dup.status).toBe(409)
    expect(dup.body.error).toMatchObject({ type: 'conflict', code: 'audience_exists', param: 'name' })
    expect((await client.post('/v1/audiences', other.live, { name: 'Newsletter' })).status).toBe(201)
    expect((await client.post('/v1/audiences', acme.live, { name: '' })).body.error).toMatchObject({
      code: 'invalid_body',
      param: 'name',
    })

    const b = await client.post('/v1/audiences', acme.live, { name: 'Beta' })
    const clash = await client.patch(`/v1/audiences/${b.body.id}`, acme.live, { name: 'Newsletter' })
    expect(clash.body.error.code).toBe('audience_exists')
    const renamed = await client.patch(`/v1/audiences/${b.body.id}`, acme.live, { name: 'Beta testers' })
    expect(renamed.body).toMatchObject({ id: b.body.id, name: 'Beta testers' })

    const list = await client.get('/v1/audiences', acme.live)
    expect(list.body.data.map((x: any) => x.name)).toEqual(['Beta testers', 'Newsletter'])
    expect(list.body.nextCursor).toBeNull()
    expect((await client.get(`/v1/audiences/${a.body.id}`, other.live)).body.error.code).toBe(
      'audience_not_found',
    )
  })

  it('a contact deleted while being added to an audience leaves no member behind', async () => {
    const aud = (await client.post('/v1/audiences', acme.live, { name: 'Racing' })).body.id
    for (let round = 0; round < 40; round++) {
      const c = await client.post('/v1/contacts', acme.live, { email: `gone${round}@example.com` })
      const [added] = await Promise.all([
        client.post(`/v1/audiences/${aud}/contacts`, acme.live, { contactIds: [c.body.id] }),
        client.del(`/v1/contacts/${c.body.id}`, acme.live),
      ])
      expect([200, 404]).toContain(added.status)
    }
    const a = await client.get(`/v1/audiences/${aud}`, acme.live)
    expect(a.body.contactCount).toBe(0)
    expect((await client.get(`/v1/contacts?audienceId=${aud}`, acme.live)).body.data).toEqual([])
    expect(
      (await sql(te, 'SELECT count(*)::int AS n FROM audience_members WHERE audience_id = $1', [aud]))[0].n,
    ).toBe(0)
  })

  it('adds, lists and removes members, counting them', async () => {
    const aud = (await client.post('/v1/audiences', acme.live, { name: 'Members' })).body
    const ids: string[] = []
    for (const email of ['m1@x.test', 'm2@x.test', 'm3@x.test']) {
      ids.push((await client.post('/v1/contacts', acme.live, { email })).body.id)
    }
    const add = await client.post(`/v1/audiences/${aud.id}/contacts`, acme.live, { contactIds: ids })
    expect(add.body).toEqual({ added: 3 })
    expect(
      (await client.post(`/v1/audiences/${aud.id}/contacts`, acme.live, { contactIds: ids })).body,
    ).toEqual({
      added: 0,
    })
    expect((await client.get(`/v1/audiences/${aud.id}`, acme.live)).body.contactCount).toBe(3)

    const members = await client.get(`/v1/audiences/${aud.id}/contacts?limit=2`, acme.live)
    expect(members.body.data.map((c: any) => c.email)).toEqual(['m3@x.test', 'm2@x.test'])
    const filtered = await client.get(`/v1/contacts?audienceId=${aud.id}&q=m1`, acme.live)
    expect(filtered.body.data.map((c: any) => c.id)).toEqual([ids[0]])

    // The body of a DELETE names the contacts to remove.
    const removed = await client.call('DELETE', `/v1/audiences/${aud.id}/contacts`, {
      key: acme.live,
      body: { contactIds: [ids[0], ids[0]] },
    })
    expect(removed.body).toEqual({ removed: 1 })
    expect((await client.get(`/v1/audiences/${aud.id}`, acme.live)).body.contactCount).toBe(2)

    const foreign = (await client.post('/v1/contacts', other.live, { email: 'f@x.test' })).body.id
    const bad = await client.post(`/v1/audiences/${aud.id}/contacts`, acme.live, {
      contactIds: [ids[1], foreign],
    })
    expect(bad.status).toBe(404)
    expect(bad.body.error).toMatchObject({ code: 'contact_not_found', param: 'contactIds.1' })
    for (const body of [{ contactIds: [] }, {}, { contactIds: 'ct_x' }]) {
      const r = await client.post(`/v1/audiences/${aud.id}/contacts`, acme.live, body)
      expect(r.body.error).toMatchObject({ code: 'invalid_body' })
    }
    const noBody = await client.call('DELETE', `/v1/audiences/${aud.id}/contacts`, { key: acme.live })
    expect(noBody.body.error.code).toBe('missing_body')
    expect((await client.get('/v1/audiences/aud_nope/contacts', acme.live)).status).toBe(404)

    // Deleting a contact takes it out of its audiences; deleting an audience keeps its contacts.
    await client.del(`/v1/contacts/${ids[1]}`, acme.live)
    expect((await client.get(`/v1/audiences/${aud.id}`, acme.live)).body.contactCount).toBe(1)
    expect((await client.del(`/v1/audiences/${aud.id}`, acme.live)).body).toEqual({
      id: aud.id,
      deleted: true,
    })
    expect((await client.get(`/v1/contacts/${ids[2]}`, acme.live)).status).toBe(200)
    expect((await client.get(`/v1/audiences/${aud.id}`, acme.live)).status).toBe(404)
  })

  it('imports straight into an audience, and serves the admin mirror', async () => {
    const aud = (await client.post('/v1/admin/projects/acme/audiences', client.admin, { name: 'Imported' }))
      .body
    const r = await client.post(
      `/v1/admin/projects/acme/contacts/import?audienceId=${aud.id}`,
      client.admin,
      [{ email: 'i1@x.test' }, { email: 'm3@x.test' }],
    )
    expect(r.body).toEqual({ created: 1, updated: 1 })
    expect((await client.get(`/v1/audiences/${aud.id}`, acme.live)).body.contactCount).toBe(2)
    const wrong = await client.post('/v1/contacts/import?audienceId=aud_missing', acme.live, [
      { email: 'z@x.test' },
    ])
    expect(wrong.body.error).toMatchObject({ code: 'audience_not_found', param: 'audienceId' })
  })
})

describe('contacts.unsubscribe (the subject behind one-click unsubscribe links)', () => {
  it('marks the contact unsubscribed, again harmlessly, and 404s for another project', async () => {
    const c = (await client.post('/v1/contacts', acme.live, { email: 'leaver@x.test' })).body
    const nc = await connect({ servers: te.natsUrl })
    const ask = async (payload: unknown) => {
      const m = await nc.request(
        `${te.natsPrefix}.${SUBJECTS.contactsUnsubscribe}`,
        JSON.stringify(payload),
        {
          timeout: 5000,
        },
      )
      return new TextDecoder().decode(m.data)
    }
    try {
      expect(JSON.parse(await ask({ projectId: acme.project.id, contactId: c.id }))).toEqual({
        unsubscribed: true,
      })
      expect(JSON.parse(await ask({ projectId: acme.project.id, contactId: c.id }))).toEqual({
        unsubscribed: true,
      })
      expect(await ask({ projectId: other.project.id, contactId: c.id })).toMatch(
        /^SERVICE_ERROR:.*contact_not_found/,
      )
    } finally {
      await nc.close()
    }
    expect((await client.get(`/v1/contacts/${c.id}`, acme.live)).body.unsubscribed).toBe(true)
  })
})
