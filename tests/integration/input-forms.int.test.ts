import { beforeAll, describe, expect, it } from 'vitest'
import { projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// The form in which free text is stored: names trimmed alike on every resource, subjects free of
// control characters from the moment they are saved, address limits on the stored address, one
// form per domain. Through the gateway, as a client sees it.
const { client } = useStack(['auth', 'email', 'broadcast', 'gateway'])
let acme: Awaited<ReturnType<typeof projectWithDomain>>
let audienceId: string

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
  audienceId = (await client.post('/v1/audiences', acme.live, { name: 'Everyone' })).body.id
})

const draft = (over: Record<string, unknown> = {}) =>
  client.post('/v1/broadcasts', acme.live, {
    audienceId,
    from: acme.from,
    subject: 'News',
    html: '<p>Hi</p>',
    ...over,
  })

describe('display names', () => {
  it('are stored trimmed on every resource, as audience names are', async () => {
    const bc = await draft({ name: '  March issue \n' })
    expect(bc.status).toBe(201)
    expect(bc.body.name).toBe('March issue')
    const patched = await client.patch(`/v1/broadcasts/${bc.body.id}`, acme.live, { name: ' April\t' })
    expect(patched.body.name).toBe('April')

    const aud = await client.post('/v1/audiences', acme.live, { name: '  Weekly  ' })
    expect(aud.body.name).toBe('Weekly')

    const proj = await client.post('/v1/admin/projects', client.admin, {
      slug: 'spaced',
      name: ' Spaced Co ',
    })
    expect(proj.status).toBe(201)
    expect(proj.body.name).toBe('Spaced Co')
    const renamed = await client.patch('/v1/admin/projects/spaced', client.admin, { name: '\tSpaced Inc\n' })
    expect(renamed.body.name).toBe('Spaced Inc')

    const key = await client.post('/v1/admin/projects/spaced/api-keys', client.admin, {
      name: '  ci key ',
      mode: 'test',
    })
    expect(key.status).toBe(201)
    expect(key.body.name).toBe('ci key')
    const keyRenamed = await client.patch(`/v1/admin/api-keys/${key.body.id}`, client.admin, {
      name: ' deploy ',
    })
    expect(keyRenamed.body.name).toBe('deploy')
    expect((await client.get('/v1/me', key.body.key)).body.key.name).toBe('deploy')
  })

  it('of nothing but spaces are 400 invalid_body naming name, and nothing is stored', async () => {
    const before = (await client.get('/v1/broadcasts', acme.live)).body.data.length
    const bc = await draft({ name: '  \t ' })
    expect(bc.status).toBe(400)
    expect(bc.body.error).toMatchObject({ type: 'validation_error', code: 'invalid_body', param: 'name' })
    expect((await client.get('/v1/broadcasts', acme.live)).body.data.length).toBe(before)

    const ok = await draft({ name: 'Kept' })
    const patched = await client.patch(`/v1/broadcasts/${ok.body.id}`, acme.live, { name: ' ' })
    expect(patched.body.error).toMatchObject({ code: 'invalid_body', param: 'name' })
    expect((await client.get(`/v1/broadcasts/${ok.body.id}`, acme.live)).body.name).toBe('Kept')
    // null still clears a broadcast's name: it is optional, just never blank.
    expect(
      (await client.patch(`/v1/broadcasts/${ok.body.id}`, acme.live, { name: null })).body.name,
    ).toBeNull()

    for (const [path, body] of [
      ['/v1/admin/projects', { slug: 'blank', name: '   ' }],
      ['/v1/admin/projects/acme', { name: '\n' }],
      ['/v1/admin/projects/acme/api-keys', { name: ' ', mode: 'live' }],
      [`/v1/admin/api-keys/${acme.liveId}`, { name: '\t' }],
    ] as const) {
      const r =
        path.endsWith('acme') || path.includes('/api-keys/key_')
          ? await client.patch(path, client.admin, body)
          : await client.post(path, client.admin, body)
      expect(r.status, path).toBe(400)
      expect(r.body.error, path).toMatchObject({ code: 'invalid_body', param: 'name' })
    }
    expect((await client.get('/v1/admin/projects/blank', client.admin)).status).toBe(404)
    expect((await client.get('/v1/admin/projects/acme', client.admin)).body.name).toBe('Project acme')
  })
})

describe('template and broadcast subjects', () => {
  // A send's subject with a control character is refused; a template's or a broadcast's was saved
  // and the character silently dropped when each email was rendered.
  const bad = ['Hi \u0007there', 'Sale\u001b[31m', 'Price\u007f', 'End\u0085']

  it('with a control character are 400 invalid_body param subject when saved, as a send is', async () => {
    for (const subject of bad) {
      const send = await client.post('/v1/emails', acme.test, {
        from: acme.from,
        to: 'ann@example.com',
        subject,
        html: '<p>x</p>',
      })
      expect(send.body.error, JSON.stringify(subject)).toMatchObject({
        code: 'invalid_body',
        param: 'subject',
      })

      const t = await client.post('/v1/templates', acme.live, { name: 'ctl', subject, html: '<p>x</p>' })
      expect(t.status, JSON.stringify(subject)).toBe(400)
      expect(t.body.error).toMatchObject({ type: 'validation_error', code: 'invalid_body', param: 'subject' })

      const b = await draft({ subject })
      expect(b.status, JSON.stringify(subject)).toBe(400)
      expect(b.body.error).toMatchObject({ code: 'invalid_body', param: 'subject' })
    }
    expect((await client.get('/v1/templates/ctl', acme.live)).status).toBe(404)
  })

  it('are refused on change too, leaving what was saved', async () => {
    const t = await client.post('/v1/templates', acme.live, {
      name: 'fine',
      subject: 'Hi {{name}}',
      html: 'x',
    })
    expect(t.status).toBe(201)
    const tp = await client.patch('/v1/templates/fine', acme.live, { subject: 'Hi {{name}}\u0001' })
    expect(tp.body.error).toMatchObject({ code: 'invalid_body', param: 'subject' })
    expect((await client.get('/v1/templates/fine', acme.live)).body).toMatchObject({
      version: 1,
      subject: 'Hi {{name}}',
    })

    const b = await draft({ subject: 'News' })
    const bp = await client.patch(`/v1/broadcasts/${b.body.id}`, acme.live, { subject: 'News\u0008' })
    expect(bp.body.error).toMatchObject({ code: 'invalid_body', param: 'subject' })
    expect((await client.get(`/v1/broadcasts/${b.body.id}`, acme.live)).body.subject).toBe('News')

    // A tab is not refused (a send's subject takes it too).
    expect((await draft({ subject: 'A\tB' })).status).toBe(201)
    expect(
      (await client.post('/v1/templates', acme.live, { name: 'tab', subject: 'A\tB', html: 'x' })).status,
    ).toBe(201)
  })
})

describe('address lengths', () => {
  // 320 characters exactly, the most an address may have as stored; 321 is one too many.
  const at = (n: number, domain = 'example.com') => `${'a'.repeat(n - domain.length - 1)}@${domain}`
  const longest = at(320)
  const padded = (s: string) => ` ${s}\n`

  it('apply to a send recipient as stored (trimmed): spaces around a valid one are no longer refused', async () => {
    const cc = at(320, 'example.org')
    const bcc = at(320, 'example.net')
    const r = await client.post('/v1/emails', acme.test, {
      from: acme.from,
      to: padded(longest),
      cc: [padded(cc)],
      bcc: padded(bcc),
      replyTo: padded(at(320, 'acme.test')),
      subject: 'Long',
      text: 'x',
    })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    const rec = (await client.get(`/v1/emails/${r.body.id}`, acme.test)).body
    expect(rec).toMatchObject({ to: [longest], cc: [cc], bcc: [bcc], replyTo: [at(320, 'acme.test')] })

    for (const field of ['to', 'cc', 'bcc'] as const) {
      const over = await client.post('/v1/emails', acme.test, {
        from: acme.from,
        to: 'ann@example.com',
        subject: 'Long',
        text: 'x',
        [field]: padded(at(321)),
      })
      expect(over.body.error, field).toMatchObject({
        code: 'invalid_body',
        param: field === 'to' ? 'to.0' : `${field}.0`,
      })
    }
  })

  it('apply to from and replyTo mailboxes (400 characters) as stored', async () => {
    // A display name filling a mailbox to 400 characters exactly.
    const box = `${'N'.repeat(400 - ` <hello@${acme.domain}>`.length)} <hello@${acme.domain}>`
    expect(box.length).toBe(400)
    const r = await client.post('/v1/emails', acme.test, {
      from: padded(box),
      to: 'ann@example.com',
      replyTo: [padded(box)],
      subject: 'Long name',
      text: 'x',
    })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    const rec = (await client.get(`/v1/emails/${r.body.id}`, acme.test)).body
    expect(rec).toMatchObject({ from: box, replyTo: [box] })
    const over = await client.post('/v1/emails', acme.test, {
      from: padded(`N${box}`),
      to: 'ann@example.com',
      subject: 'x',
      text: 'x',
    })
    expect(over.body.error).toMatchObject({ code: 'invalid_body', param: 'from' })
  })

  it("apply to a contact's email and a suppression's address as stored", async () => {
    const c = await client.post('/v1/contacts', acme.live, { email: padded(longest.toUpperCase()) })
    expect(c.status, JSON.stringify(c.body)).toBe(201)
    expect(c.body.email).toBe(longest)
    const imported = await client.post('/v1/contacts/import', acme.live, [
      { email: padded(at(320, 'example.org')) },
    ])
    expect(imported.body).toEqual({ created: 1, updated: 0 })

    const s = await client.post('/v1/admin/suppressions', client.admin, { address: padded(longest) })
    expect(s.status, JSON.stringify(s.body)).toBe(201)
    expect(s.body.address).toBe(longest)
    const live = await client.post('/v1/emails', acme.live, {
      from: acme.from,
      to: longest,
      subject: 's',
      text: 'x',
    })
    expect(live.body.error).toMatchObject({ code: 'recipient_suppressed', param: longest })

    expect((await client.post('/v1/contacts', acme.live, { email: at(321) })).body.error).toMatchObject({
      code: 'invalid_body',
      param: 'email',
    })
    expect(
      (await client.post('/v1/admin/suppressions', client.admin, { address: padded(at(321)) })).body.error,
    ).toMatchObject({ code: 'invalid_body', param: 'address' })
  })
})
