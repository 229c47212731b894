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
