import { beforeAll, describe, expect, it } from 'vitest'
import { email, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// Keys named like Object.prototype's members, as a JSON body carries them: JSON.parse makes
// `__proto__` an own key (an object literal would set the prototype instead).
const { client } = useStack(['auth', 'email', 'broadcast', 'gateway'])
let acme: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme', 'acme.test')
})

const json = (text: string) => JSON.parse(text) as Record<string, unknown>

describe('a send: tags and headers named __proto__', () => {
  it('a tag named __proto__ is 400 invalid_body naming it, not silently dropped', async () => {
    const r = await client.post(
      '/v1/emails',
      acme.live,
      email(acme.from, { tags: json('{"__proto__":"x","plan":"pro"}') }),
    )
    expect(r.status).toBe(400)
    expect(r.body.error).toMatchObject({ code: 'invalid_body', param: 'tags.__proto__' })
  })

  it('a header named __proto__ is 400 invalid_header naming it, not silently dropped', async () => {
    const r = await client.post(
      '/v1/emails',
      acme.live,
      email(acme.from, { headers: json('{"__proto__":"x","X-Campaign":"spring"}') }),
    )
    expect(r.status).toBe(400)
    expect(r.body.error).toMatchObject({ code: 'invalid_header', param: 'headers.__proto__' })
  })

  it('other names of Object.prototype are ordinary tags and headers', async () => {
    const r = await client.post(
      '/v1/emails',
      acme.live,
      email(acme.from, {
        tags: { constructor: 'a', toString: 'b', hasOwnProperty: 'c' },
        headers: { constructor: 'x', valueOf: 'y' },
      }),
    )
    expect(r.status).toBe(202)
    const got = await client.get(`/v1/emails/${r.body.id}`, acme.live)
    expect(got.body.tags).toEqual({ constructor: 'a', toString: 'b', hasOwnProperty: 'c' })
    const content = await client.get(`/v1/emails/${r.body.id}/content`, acme.live)
    expect(content.body.headers).toEqual({ constructor: 'x', valueOf: 'y' })
  })
})

describe('a contact: a data key named __proto__', () => {
  it('is 400 invalid_body naming it on create, import and PATCH, and the stored data stays', async () => {
    const made = await client.post('/v1/contacts', acme.live, {
      email: 'ann@example.com',
      data: { plan: 'pro' },
    })
    expect(made.status).toBe(201)

    const create = await client.post('/v1/contacts', acme.live, {
      email: 'bob@example.com',
      data: json('{"__proto__":{"x":1},"plan":"free"}'),
    })
    expect(create.status).toBe(400)
    expect(create.body.error).toMatchObject({ code: 'invalid_body', param: 'data.__proto__' })

    const imported = await client.post('/v1/contacts/import', acme.live, [
      { email: 'cy@example.com' },
      { email: 'di@example.com', data: json('{"__proto__":"x"}') },
    ])
    expect(imported.status).toBe(400)
    expect(imported.body.error).toMatchObject({ code: 'invalid_body', param: '1.data.__proto__' })

    // A PATCH of that key alone cleared the contact's data to {}.
    const patched = await client.patch(`/v1/contacts/${made.body.id}`, acme.live, {
      data: json('{"__proto__":{"plan":"free"}}'),
    })
    expect(patched.status).toBe(400)
    expect(patched.body.error).toMatchObject({ code: 'invalid_body', param: 'data.__proto__' })
    expect((await client.get(`/v1/contacts/${made.body.id}`, acme.live)).body.data).toEqual({ plan: 'pro' })
  })

  it('keeps constructor and __proto__ below the top level as data', async () => {
    const r = await client.post('/v1/contacts', acme.live, {
      email: 'eve@example.com',
      data: json('{"constructor":"c","profile":{"__proto__":{"x":1}}}'),
    })
    expect(r.status).toBe(201)
    const got = await client.get(`/v1/contacts/${r.body.id}`, acme.live)
    expect(got.body.data.constructor).toBe('c')
    expect(Object.getOwnPropertyDescriptor(got.body.data.profile, '__proto__')?.value).toEqual({ x: 1 })
  })
})

describe('template data under __proto__', () => {
  it('a preview renders the data a send renders', async () => {
    const made = await client.post('/v1/templates', acme.live, {
      name: 'proto-data',
      subject: 'Hi',
      text: 'Hi {{__proto__.name}}',
      variables: [{ name: '__proto__.name', required: true }],
    })
    expect(made.status).toBe(201)
    const data = json('{"__proto__":{"name":"Ann"}}')

    const sent = await client.post('/v1/emails', acme.test, {
      from: acme.from,
      to: 'bob@example.com',
      template: 'proto-data',
      data,
    })
    expect(sent.status).toBe(200)
    expect((await client.get(`/v1/emails/${sent.body.id}`, acme.test)).body.textPreview).toBe('Hi Ann')

    const preview = await client.post('/v1/templates/proto-data/render', acme.live, { data })
    expect(preview.status).toBe(200)
    expect(preview.body.text).toBe('Hi Ann')
    expect(({} as Record<string, unknown>).name).toBeUndefined()
  })
})

describe('an attachment whose extension names a member of Object.prototype', () => {
  it('gets application/octet-stream, as any unknown extension', async () => {
    const content = Buffer.from('hello').toString('base64')
    const r = await client.post(
      '/v1/emails',
      acme.live,
      email(acme.from, {
        attachments: [
          { filename: 'notes.constructor', content },
          { filename: 'dump.__proto__', content },
          { filename: 'a.toString', content },
          { filename: 'report.pdf', content },
        ],
      }),
    )
    expect(r.status).toBe(202)
    const got = await client.get(`/v1/emails/${r.body.id}/content`, acme.live)
    expect(got.body.attachments.map((a: { type: unknown }) => a.type)).toEqual([
      'application/octet-stream',
      'application/octet-stream',
      'application/octet-stream',
      'application/pdf',
    ])
  })
})

describe('a text part derived from html naming a member of Object.prototype', () => {
  it('keeps &constructor; as written, like any unknown reference', async () => {
    const made = await client.post('/v1/templates', acme.live, {
      name: 'proto-entities',
      subject: 'Hi',
      html: '<p>Tom &constructor; Jerry &Constructor; &amp; &unknown;</p>',
    })
    expect(made.status).toBe(201)
    const preview = await client.post('/v1/templates/proto-entities/render', acme.live, {})
    expect(preview.status).toBe(200)
    expect(preview.body.text).toBe('Tom &constructor; Jerry &Constructor; & &unknown;')
  })
})
