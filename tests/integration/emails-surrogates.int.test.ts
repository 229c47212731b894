import { beforeAll, describe, expect, it } from 'vitest'
import { email, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// Text Mailer cuts or builds itself (the 200-character preview, a rendered subject cut at 998, a
// template's text decoded from its html) must never end up holding half an emoji: the email's row
// is written as jsonb, which refuses a lone surrogate, and such sends were a 500 `internal`.
const { client } = useStack(['auth', 'email', 'gateway'])
let acme: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme')
})

/** An emoji across characters 199-200: the preview's cut falls between its two halves. */
const EMOJI_AT_200 = `${'a'.repeat(199)}😀 and the rest`
const LONE = /\p{Cs}/u

const read = async (id: string) => {
  const got = await client.get(`/v1/emails/${id}`, acme.live)
  const content = await client.get(`/v1/emails/${id}/content`, acme.live)
  expect(got.status).toBe(200)
  expect(content.status).toBe(200)
  return { email: got.body, content: content.body }
}

/** A send from a stored template: no subject, html or text of its own. */
const fromTemplate = (template: string, data: Record<string, unknown>) => {
  const { subject: _s, html: _h, ...rest } = email(acme.from)
  return { ...rest, template, data }
}

describe('an emoji across the 200th character of the text', () => {
  it('is accepted with a live key (202); the preview stops before the emoji, the text is kept whole', async () => {
    const live = await client.post(
      '/v1/emails',
      acme.live,
      email(acme.from, { html: undefined, text: EMOJI_AT_200 }),
    )
    expect(live.status).toBe(202)
    expect(live.body.status).toBe('queued')
    const { email: stored, content } = await read(live.body.id)
    expect(stored.textPreview).toBe('a'.repeat(199))
    expect(LONE.test(stored.textPreview)).toBe(false)
    expect(content.text).toBe(EMOJI_AT_200)
  })

  it('is accepted with a test key too (200 test)', async () => {
    const test = await client.post(
      '/v1/emails',
      acme.test,
      email(acme.from, { html: undefined, text: EMOJI_AT_200 }),
    )
    expect(test.status).toBe(200)
    expect(test.body.status).toBe('test')
  })

  it('in the html (no text part): 202, the preview from the html stops before the emoji', async () => {
    const r = await client.post('/v1/emails', acme.live, email(acme.from, { html: `<p>${EMOJI_AT_200}</p>` }))
    expect(r.status).toBe(202)
    const { email: stored, content } = await read(r.body.id)
    expect(stored.textPreview).toBe('a'.repeat(199))
    expect(content.html).toBe(`<p>${EMOJI_AT_200}</p>`)
  })

  it('in a batch: 200 with both items accepted', async () => {
    const r = await client.post('/v1/emails/batch', acme.live, [
      email(acme.from, { to: 'one@x.test', html: undefined, text: EMOJI_AT_200 }),
      email(acme.from, { to: 'two@x.test' }),
    ])
    expect(r.status).toBe(200)
    expect(r.body.data).toEqual([
      { id: expect.stringMatching(/^email_/), status: 'queued' },
      { id: expect.stringMatching(/^email_/), status: 'queued' },
    ])
    expect((await read(r.body.data[0].id)).email.textPreview).toBe('a'.repeat(199))
  })
})

describe('templates', () => {
  it('a rendered subject cut at 998 across an emoji: 202, the emoji left out whole', async () => {
    const t = await client.post('/v1/templates', acme.live, {
      name: 'long-subject',
      subject: '{{s}}',
      text: 'Hi',
    })
    expect(t.status).toBe(201)
    const r = await client.post(
      '/v1/emails',
      acme.live,
      fromTemplate('long-subject', { s: `${'a'.repeat(997)}😀b` }),
    )
    expect(r.status).toBe(202)
    const { email: stored } = await read(r.body.id)
    expect(stored.subject).toBe('a'.repeat(997))
  })

  it('a numeric reference to half an emoji in the html: 202, the derived text holds U+FFFD', async () => {
    const t = await client.post('/v1/templates', acme.live, {
      name: 'half-emoji',
      subject: 'Half',
      html: '<p>half &#xD83D; and &#55357; here</p>',
    })
    expect(t.status).toBe(201)
    const r = await client.post('/v1/emails', acme.live, fromTemplate('half-emoji', {}))
    expect(r.status).toBe(202)
    const { email: stored, content } = await read(r.body.id)
    expect(content.text).toBe('half \ufffd and \ufffd here')
    expect(stored.textPreview).toBe('half \ufffd and \ufffd here')
  })
})
