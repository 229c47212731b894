import { useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { projectWithDomain } from '../support/emails.js'
import { api } from '../support/http.js'
import { Stack } from '../support/stack.js'

// The form in which free text is stored: names trimmed alike on every resource, subjects free of
// control characters from the moment they are saved, address limits on the stored address, one
// form per domain. Through the gateway, as a client sees it.
const te = useTestEnv()
const stack = new Stack(te)
let client: ReturnType<typeof api>
let acme: Awaited<ReturnType<typeof projectWithDomain>>
let audienceId: string

beforeAll(async () => {
  await stack.startAll(['auth', 'email', 'broadcast', 'gateway'])
  client = api(stack.gatewayUrl)
  acme = await projectWithDomain(client, 'acme')
  audienceId = (await client.post('/v1/audiences', acme.live, { name: 'Everyone' })).body.id
})
afterAll(() => stack.stopAll())

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
