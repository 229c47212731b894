import { connect } from 'nats'
import { beforeAll, describe, expect, it } from 'vitest'
import { email, projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'

// Renders and template replies bounded by the size limits: a render past MAX_MESSAGE_BYTES (10 MiB
// here, the default) stops there, and no reply is larger than the NATS server's max_payload (1 MiB
// unless configured), which would make it a 500 however often it was asked again.
const { te, client } = useStack(['auth', 'email', 'gateway'])
let acme: Awaited<ReturnType<typeof projectWithDomain>>
let other: Awaited<ReturnType<typeof projectWithDomain>>
let maxPayload: number

beforeAll(async () => {
  const nc = await connect({ servers: te.natsUrl })
  maxPayload = nc.info!.max_payload
  await nc.close()
  acme = await projectWithDomain(client, 'acme')
  other = await projectWithDomain(client, 'other')
})

// 100 KB of static html repeated once per row: 300 rows render 30 MB, under the renderer's old
// 32 Mi-character bound, so the text was derived from all of it (seconds per email) before the
// size check refused it.
const ROW = `<div><p>${'Lorem ipsum dolor sit amet. '.repeat(3570)}</p></div>\n`
const rows = (n: number) => Array.from({ length: n }, (_, i) => i)

const template = (name: string) =>
  client.post('/v1/templates', acme.live, { name, subject: 'Rows', html: `{{#each rows}}${ROW}{{/each}}` })
const fromTemplate = (name: string, data: Record<string, unknown>) =>
  email(acme.from, { html: undefined, subject: undefined, template: name, data })

describe('a render past MAX_MESSAGE_BYTES', () => {
  it('is refused while rendering, so a batch of them holds up no other project', async () => {
    expect((await template('rows')).status).toBe(201)
    const items = Array.from({ length: 100 }, () => fromTemplate('rows', { rows: rows(300) }))
    // A test key: nothing is counted against the project.
    const heavy = client.post('/v1/emails/batch', acme.test, items)
    const meanwhile = client.post('/v1/emails', other.live, email(other.from))
    const [batch, send] = await Promise.all([heavy, meanwhile])
    expect(send.status).toBe(202)
    expect(batch.status).toBe(200)
    expect(batch.body.data).toHaveLength(100)
    for (const item of batch.body.data)
      expect(item.error).toMatchObject({ type: 'validation_error', code: 'payload_too_large', param: 'html' })
    // The same template with data that fits is sent as usual.
    const small = await client.post('/v1/emails', acme.test, fromTemplate('rows', { rows: rows(2) }))
    expect(small.body.status).toBe('test')
  })

  it('is answered at the size step of a send: a bad attachment or a missing subject is told first', async () => {
    // The contract's check order: template → subject → attachments → size.
    const noSubject = await client.post('/v1/templates', acme.live, {
      name: 'rows-no-subject',
      html: `{{#each rows}}${ROW}{{/each}}`,
    })
    expect(noSubject.status).toBe(201)
    const big = { rows: rows(300) }
    const badAttachment = await client.post('/v1/emails', acme.test, {
      ...fromTemplate('rows', big),
      attachments: 'nope',
    })
    expect(badAttachment.status).toBe(400)
    expect(badAttachment.body.error).toMatchObject({ code: 'invalid_attachment', param: 'attachments' })
    const missingSubject = await client.post('/v1/emails', acme.test, fromTemplate('rows-no-subject', big))
    expect(missingSubject.status).toBe(400)
    expect(missingSubject.body.error).toMatchObject({ code: 'invalid_body', param: 'subject' })
    // The template's subject, rendered before the html passed the limit, counts as given.
    const tooLarge = await client.post('/v1/emails', acme.test, fromTemplate('rows', big))
    expect(tooLarge.body.error).toMatchObject({ code: 'payload_too_large', param: 'html' })
  })

  it('is refused in a preview as a send of it would be', async () => {
    const r = await client.post('/v1/templates/rows/render', acme.live, { data: { rows: rows(300) } })
    expect(r.status).toBe(400)
    expect(r.body.error).toMatchObject({ type: 'validation_error', code: 'payload_too_large', param: 'html' })
  })
})

describe('replies over the NATS max_payload', () => {
  it('a preview under MAX_MESSAGE_BYTES but over max_payload is 400 payload_too_large, not a 500', async () => {
    const n = Math.ceil(maxPayload / ROW.length) + 1
    const r = await client.post('/v1/templates/rows/render', acme.live, { data: { rows: rows(n) } })
    expect(r.status).toBe(400)
    expect(r.body.error).toMatchObject({ code: 'payload_too_large', param: 'html' })
    expect(r.body.error.message).toContain(`NATS max_payload, ${maxPayload} bytes`)
    const fits = await client.post('/v1/templates/rows/render', acme.live, { data: { rows: rows(2) } })
    expect(fits.status).toBe(200)
    expect(fits.body.html).toBe(ROW.repeat(2))
  })

  it('the versions list cuts a page to what one reply carries, and its cursor pages on', async () => {
    // Five versions of about 30 % of max_payload each: three fit a page.
    const body = (v: number) => `<p>v${v}</p>${'x'.repeat(Math.floor(maxPayload * 0.3))}`
    expect((await client.post('/v1/templates', acme.live, { name: 'big', html: body(1) })).status).toBe(201)
    for (let v = 2; v <= 5; v++)
      expect((await client.patch('/v1/templates/big', acme.live, { html: body(v) })).status).toBe(200)

    const seen: number[][] = []
    let cursor: string | null = null
    do {
      const q: string = cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''
      const page = await client.get(`/v1/templates/big/versions${q}`, acme.live)
      expect(page.status).toBe(200)
      seen.push(page.body.data.map((v: { version: number; html: string }) => v.version))
      for (const v of page.body.data) expect(v.html).toBe(body(v.version))
      cursor = page.body.nextCursor
    } while (cursor && seen.length < 10)
    expect(seen).toEqual([
      [5, 4, 3],
      [2, 1],
    ])
    // `limit` still holds below what fits.
    const two = await client.get('/v1/templates/big/versions?limit=2', acme.live)
    expect(two.body.data.map((v: { version: number }) => v.version)).toEqual([5, 4])
    expect(two.body.nextCursor).toEqual(expect.any(String))
  })
})
