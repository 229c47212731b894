import { beforeAll, describe, expect, it } from 'vitest'
import { insertDomain } from '../support/db.js'
import { email, inSeconds, projectWithDomain } from '../support/emails.js'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'

// A small MAX_MESSAGE_BYTES so the size check can be shown without megabytes of JSON.
const { te, client } = useStack(['auth', 'email', 'gateway'], { env: { MAX_MESSAGE_BYTES: '4096' } })
let acme: Awaited<ReturnType<typeof projectWithDomain>>

beforeAll(async () => {
  acme = await projectWithDomain(client, 'acme', 'acme.test', { defaultFrom: 'Acme <news@acme.test>' })
})

const send = (body: unknown, key = acme.live, headers?: Record<string, string>) =>
  client.post('/v1/emails', key, body, headers)

describe('POST /v1/emails: accepted sends (interface.md part 3)', () => {
  it('a live key gets 202 queued, and the email is recorded with its timeline', async () => {
    const r = await send(
      email(acme.from, { to: ['Alice@Example.com'], text: 'Hi Alice', tags: { campaign: 'welcome' } }),
    )
    expect(r.status).toBe(202)
    expect(r.body).toEqual({ id: expect.stringMatching(/^email_[0-9A-Z]{26}$/), status: 'queued' })

    const got = await client.get(`/v1/emails/${r.body.id}`, acme.live)
    expect(got.status).toBe(200)
    expect(got.body).toMatchObject({
      id: r.body.id,
      status: 'queued',
      mode: 'live',
      source: 'http',
      apiKeyId: acme.liveId,
      from: acme.from,
      to: ['alice@example.com'],
      cc: [],
      bcc: [],
      replyTo: [],
      subject: 'Hello',
      textPreview: 'Hi Alice',
      tags: { campaign: 'welcome' },
      template: null,
      attempts: 0,
      trackOpens: false,
      scheduledAt: null,
      sentAt: null,
    })
    expect(got.body.queuedAt).not.toBeNull()
    expect(got.body.recipients).toEqual([
      expect.objectContaining({
        address: 'alice@example.com',
        kind: 'to',
        status: 'queued',
        smtpStatus: null,
      }),
    ])
    expect(got.body.events).toEqual([
      expect.objectContaining({
        type: 'email.queued',
        recipient: null,
        data: expect.objectContaining({ emailId: r.body.id }),
      }),
    ])
  })

  it('a test key gets 200 test; the email is stored as test with email.test on its timeline', async () => {
    const r = await send(email(acme.from), acme.test)
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ id: expect.any(String), status: 'test' })
    const got = await client.get(`/v1/emails/${r.body.id}`, acme.test)
    expect(got.body).toMatchObject({ status: 'test', mode: 'test', apiKeyId: acme.testId, queuedAt: null })
    expect(got.body.events.map((e: any) => e.type)).toEqual(['email.test'])
  })

  it('a future scheduledAt is 202 scheduled with email.scheduled', async () => {
    const at = inSeconds(3600)
    const r = await send(email(acme.from, { scheduledAt: at }))
    expect(r.status).toBe(202)
    expect(r.body.status).toBe('scheduled')
    const got = await client.get(`/v1/emails/${r.body.id}`, acme.live)
    expect(got.body).toMatchObject({
      status: 'scheduled',
      scheduledAt: new Date(at).toISOString(),
      queuedAt: null,
    })
    expect(got.body.events[0]).toMatchObject({
      type: 'email.scheduled',
      data: { scheduledAt: new Date(at).toISOString() },
    })
  })

  it('the admin mirror sends live without a key: source admin, apiKeyId null', async () => {
    const r = await client.post('/v1/admin/projects/acme/emails', client.admin, email(acme.from))
    expect(r.status).toBe(202)
    const got = await client.get(`/v1/emails/${r.body.id}`, acme.live)
    expect(got.body).toMatchObject({ source: 'admin', apiKeyId: null, mode: 'live' })
    const unknown = await client.post('/v1/admin/projects/nope/emails', client.admin, email(acme.from))
    expect(unknown.status).toBe(404)
    expect(unknown.body.error.code).toBe('project_not_found')
  })

  it('from is optional when the project has defaultFrom', async () => {
    const { from: _from, ...noFrom } = email(acme.from)
    const r = await send(noFrom)
    expect(r.status).toBe(202)
    expect((await client.get(`/v1/emails/${r.body.id}`, acme.live)).body.from).toBe('Acme <news@acme.test>')
  })

  it('lower-cases recipients and de-duplicates them across to, cc and bcc', async () => {
    const r = await send(
      email(acme.from, { to: ['A@x.test', 'a@X.test'], cc: ['a@x.test', 'B@x.test'], bcc: 'b@x.test' }),
    )
    const got = await client.get(`/v1/emails/${r.body.id}`, acme.live)
    expect(got.body).toMatchObject({ to: ['a@x.test'], cc: ['b@x.test'], bcc: [] })
    expect(got.body.recipients.map((x: any) => [x.address, x.kind])).toEqual([
      ['a@x.test', 'to'],
      ['b@x.test', 'cc'],
    ])
  })

  it('stores the content: html, text, headers and attachment metadata', async () => {
    const content = Buffer.from('hello attachment').toString('base64')
    const r = await send(
      email(acme.from, {
        text: 'plain',
        headers: { 'X-Campaign': 'spring' },
        attachments: [
          { filename: 'note.txt', content },
          { filename: 'blob', content, type: 'application/x-custom' },
        ],
      }),
    )
    expect(r.status).toBe(202)
    const c = await client.get(`/v1/emails/${r.body.id}/content`, acme.live)
    expect(c.status).toBe(200)
    expect(c.body).toEqual({
      html: '<p>Hello <b>there</b></p>',
      text: 'plain',
      headers: { 'X-Campaign': 'spring' },
      attachments: [
        { filename: 'note.txt', type: 'text/plain', size: 16 },
        { filename: 'blob', type: 'application/x-custom', size: 16 },
      ],
    })
  })
})

describe('POST /v1/emails: sender checks', () => {
  it('403 invalid_sender when from is not on a domain of the project', async () => {
    const r = await send(email('someone@elsewhere.test'))
    expect(r.status).toBe(403)
    expect(r.body.error).toEqual({
      type: 'permission_error',
      code: 'invalid_sender',
      message: expect.any(String),
      param: 'from',
    })
  })

  it('403 domain_not_verified for a live send from a pending domain; a test send is fine', async () => {
    await insertDomain(te, acme.project.id, 'pending.test', 'pending')
    const live = await send(email('x@pending.test'))
    expect(live.status).toBe(403)
    expect(live.body.error).toMatchObject({
      type: 'permission_error',
      code: 'domain_not_verified',
      param: 'from',
    })
    expect((await send(email('x@pending.test'), acme.test)).status).toBe(200)
    // Once verified (and the cache told), the same send goes through.
    await insertDomain(te, acme.project.id, 'pending.test', 'verified')
    expect((await send(email('x@pending.test'))).status).toBe(202)
  })

  it('from is required without defaultFrom; a malformed from is invalid_body', async () => {
    const other = await createProject(client, 'nodefault')
    const { from: _f, ...noFrom } = email(acme.from)
    const r = await send(noFrom, other.live)
    expect(r.status).toBe(400)
    expect(r.body.error).toMatchObject({ type: 'validation_error', code: 'invalid_body', param: 'from' })
    const bad = await send(email('not an address'))
    expect(bad.body.error).toMatchObject({ code: 'invalid_body', param: 'from' })
    // An escape sequence in a display name (shown by the dashboard, the CLI, mail clients).
    const escaped = await send(email(`Evil \u001b[2J <hello@${acme.domain}>`))
    expect(escaped.status).toBe(400)
    expect(escaped.body.error).toMatchObject({ code: 'invalid_body', param: 'from' })
    const replyTo = await send(email(acme.from, { replyTo: 'Bell \u0007 <help@example.com>' }))
    expect(replyTo.body.error).toMatchObject({ code: 'invalid_body', param: 'replyTo.0' })
  })
})

describe('POST /v1/emails: validation (contract.md part 3)', () => {
  const code = async (body: unknown, key = acme.live) => {
    const r = await send(body, key)
    return { status: r.status, ...r.body.error }
  }

  it('missing body, invalid JSON, unknown fields and schema failures', async () => {
    const none = await client.call('POST', '/v1/emails', { key: acme.live })
    expect(none.status).toBe(400)
    expect(none.body.error.code).toBe('missing_body')
    const bad = await client.call('POST', '/v1/emails', {
      key: acme.live,
      rawBody: '{"to":',
      headers: { 'content-type': 'application/json' },
    })
    expect(bad.body.error.code).toBe('invalid_body')
    expect(await code(email(acme.from, { reply_to: 'a@b.test' }))).toMatchObject({
      status: 400,
      code: 'invalid_body',
      param: 'reply_to',
    })
    expect(await code(email(acme.from, { to: ['ok@x.test', 'nope'] }))).toMatchObject({
      code: 'invalid_body',
      param: 'to.1',
    })
    expect(await code(email(acme.from, { subject: 'x'.repeat(999) }))).toMatchObject({
      code: 'invalid_body',
      param: 'subject',
    })
    // The tag name's own rule, not zod's "Invalid key in record".
    expect(await code(email(acme.from, { tags: { ['k'.repeat(65)]: 'v' } }))).toMatchObject({
      code: 'invalid_body',
      message: `tags.${'k'.repeat(65)}: a tag name has 1-64 characters`,
      param: `tags.${'k'.repeat(65)}`,
    })
    // At most 50 tags: every event of the email carries them.
    const tags = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`t${i}`, 'v']))
    expect(await code(email(acme.from, { tags: tags(51) }))).toMatchObject({
      status: 400,
      code: 'invalid_body',
      param: 'tags',
    })
    expect((await send(email(acme.from, { tags: tags(50) }))).status).toBe(202)
    const { html: _h, ...noContent } = email(acme.from)
    expect(await code(noContent)).toMatchObject({ code: 'invalid_body', param: 'html' })
    // Given but empty, html and text made a message with no body (a template's cannot be empty).
    const empty = { ...noContent, html: '', text: '', attachments: [{ filename: 'a.txt', content: 'aGk=' }] }
    expect(await code(empty, acme.test)).toMatchObject({ status: 400, code: 'invalid_body', param: 'html' })
    const { subject: _s, ...noSubject } = email(acme.from)
    expect(await code(noSubject)).toMatchObject({ code: 'invalid_body', param: 'subject' })
  })

  it('more than 50 recipients after de-duplication is too_many_recipients', async () => {
    const to = Array.from({ length: 40 }, (_, i) => `r${i}@x.test`)
    const cc = Array.from({ length: 11 }, (_, i) => `c${i}@x.test`)
    expect(await code(email(acme.from, { to, cc }))).toMatchObject({
      status: 400,
      code: 'too_many_recipients',
      param: 'cc',
    })
    const dupes = [...to, ...to.map((a) => a.toUpperCase())]
    expect((await send(email(acme.from, { to: dupes }))).status).toBe(202)
  })

  it('a suppressed recipient fails a live send with 422 recipient_suppressed; a test send skips the check', async () => {
    await client.post('/v1/admin/suppressions', client.admin, { address: 'gone@x.test' })
    const r = await code(email(acme.from, { to: ['fine@x.test'], bcc: 'Gone@X.test' }))
    expect(r).toMatchObject({
      status: 422,
      type: 'unprocessable',
      code: 'recipient_suppressed',
      param: 'gone@x.test',
    })
    expect((await send(email(acme.from, { to: 'gone@x.test' }), acme.test)).status).toBe(200)
  })

  it('headers: names, reserved names, line breaks and length are invalid_header', async () => {
    expect(await code(email(acme.from, { headers: { Subject: 'x' } }))).toMatchObject({
      code: 'invalid_header',
      param: 'headers.Subject',
    })
    expect(await code(email(acme.from, { headers: { 'Bad Name': 'x' } }))).toMatchObject({
      code: 'invalid_header',
      param: 'headers.Bad Name',
    })
    expect(await code(email(acme.from, { headers: { 'X-A': 'a\r\nBcc: evil@x.test' } }))).toMatchObject({
      code: 'invalid_header',
      param: 'headers.X-A',
    })
    expect(await code(email(acme.from, { headers: { 'X-A': 'x'.repeat(2049) } }))).toMatchObject({
      code: 'invalid_header',
    })
    expect(await code(email(acme.from, { headers: { 'X-A': 1 } }))).toMatchObject({
      code: 'invalid_header',
      param: 'headers.X-A',
    })
    // One field in two cases went into the message twice (In-Reply-To may appear once).
    const twice = { 'In-Reply-To': '<a@x.test>', 'in-reply-to': '<b@x.test>' }
    expect(await code(email(acme.from, { headers: twice }), acme.test)).toEqual({
      status: 400,
      type: 'validation_error',
      code: 'invalid_header',
      message: 'in-reply-to is given twice (as In-Reply-To too); header names are case-insensitive',
      param: 'headers.in-reply-to',
    })
  })

  it('an unknown template is 404 template_not_found', async () => {
    const { html: _h, ...t } = email(acme.from, { template: 'welcome', data: { name: 'A' } })
    expect(await code(t)).toMatchObject({
      status: 404,
      type: 'not_found',
      code: 'template_not_found',
      param: 'template',
    })
  })

  it('attachments: count, base64 and fields are invalid_attachment', async () => {
    const one = { filename: 'a.txt', content: 'aGk=' }
    expect(await code(email(acme.from, { attachments: Array(21).fill(one) }))).toMatchObject({
      code: 'invalid_attachment',
      param: 'attachments',
    })
    expect(
      await code(email(acme.from, { attachments: [one, { filename: 'b.txt', content: 'not base64!' }] })),
    ).toMatchObject({
      code: 'invalid_attachment',
      param: 'attachments.1.content',
    })
    expect(
      await code(email(acme.from, { attachments: [{ ...one, disposition: 'sideways' }] })),
    ).toMatchObject({
      code: 'invalid_attachment',
      param: 'attachments.0.disposition',
    })
    // Whitespace in base64 is skipped: content of nothing else is as empty as "" (a 0-byte file).
    for (const content of ['', ' \n ']) {
      expect(await code(email(acme.from, { attachments: [{ ...one, content }] }), acme.test)).toMatchObject({
        status: 400,
        code: 'invalid_attachment',
        param: 'attachments.0.content',
      })
    }
  })

  it('content over MAX_MESSAGE_BYTES is 400 payload_too_large', async () => {
    const big = Buffer.alloc(3000, 1).toString('base64')
    const r = await code(
      email(acme.from, { text: 'x'.repeat(1200), attachments: [{ filename: 'a.bin', content: big }] }),
    )
    expect(r).toMatchObject({
      status: 400,
      type: 'validation_error',
      code: 'payload_too_large',
      param: 'attachments.0',
    })
  })

  it('scheduledAt must have an offset, be in the future and at most 30 days ahead', async () => {
    for (const scheduledAt of ['2099-01-01T00:00:00', inSeconds(-60), inSeconds(31 * 86400), 12]) {
      expect(await code(email(acme.from, { scheduledAt }))).toMatchObject({
        status: 400,
        code: 'invalid_schedule',
        param: 'scheduledAt',
      })
    }
  })

  it('checks run in the contract order', async () => {
    await client.post('/v1/admin/suppressions', client.admin, { address: 'blocked@x.test' })
    const all = { to: 'blocked@x.test', headers: { Date: 'x' }, attachments: 'nope', scheduledAt: 'later' }
    // sender before recipients and suppression
    expect(await code(email('a@elsewhere.test', all))).toMatchObject({ code: 'invalid_sender' })
    // suppression before headers
    expect(await code(email(acme.from, all))).toMatchObject({ code: 'recipient_suppressed' })
    // headers before attachments and schedule
    expect(await code(email(acme.from, { ...all, to: 'ok@x.test' }))).toMatchObject({
      code: 'invalid_header',
    })
    // attachments before schedule
    expect(await code(email(acme.from, { ...all, to: 'ok@x.test', headers: {} }))).toMatchObject({
      code: 'invalid_attachment',
    })
    // a test key skips suppression and reaches headers
    expect(await code(email(acme.from, all), acme.test)).toMatchObject({ code: 'invalid_header' })
  })
})
