import { waitFor } from '@mailer/testing'
import { simpleParser } from 'mailparser'
import { beforeAll, describe, expect, it } from 'vitest'
import { email, projectWithDomain } from '../support/emails.js'
import { allParts, decodedBody, field, parseMime, rfc2231 } from '../support/mime.js'
import { useStack } from '../support/use-stack.js'

// What a project can put in the message that reaches the relay: nothing of the send input may add
// a mailbox to From, replace a field the service owns, or smuggle control characters into a header.
// Checked on the raw bytes a real SMTP server received, not on the API's answer alone.
const { client, relay } = useStack(['auth', 'email', 'gateway'], { dispatcher: true })
let live: string
let domain: string

beforeAll(async () => {
  const p = await projectWithDomain(client, 'smtp-inject', 'mail.inject.test')
  live = p.live
  domain = p.domain
})

/** Sends (202 expected) and answers the raw message the relay received. */
async function delivered(input: Record<string, unknown>): Promise<string> {
  const sent = await client.post('/v1/emails', live, input)
  expect(sent.status, JSON.stringify(sent.body)).toBe(202)
  const id = sent.body.id as string
  const got = await waitFor(() => relay.delivered.find((d) => d.emailId === id) ?? null, {
    timeoutMs: 20_000,
    what: `${id} at the relay`,
  })
  return got.raw.toString('latin1')
}

const headerBlock = (raw: string) => raw.slice(0, raw.indexOf('\r\n\r\n'))

describe('From and Reply-To display names', () => {
  it('a display name with "," or ";" stays one mailbox on the project’s domain: no foreign address reaches From', async () => {
    for (const name of ['ceo@bank.test, Bob', 'Bob; ceo@bank.test;', 'a:ceo@bank.test;']) {
      const from = `${name} <billing@${domain}>`
      const raw = await delivered(email(from, { replyTo: `${name} <help@${domain}>` }))
      const parsed = await simpleParser(raw)
      expect(parsed.from?.value.map((m) => m.address)).toEqual([`billing@${domain}`])
      expect(parsed.from?.value[0]?.name).toBe(name)
      expect(parsed.replyTo?.value.map((m) => m.address)).toEqual([`help@${domain}`])
      // The name travels quoted, as one display name.
      expect(headerBlock(raw)).toContain(`From: "${name}" <billing@${domain}>`)
    }
  })
})

describe('display names with quotes', () => {
  it('a quoted name may hold \\" and \\\\ (RFC 5322 quoted-pair): the name arrives with its quotes, escaped or encoded', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['"Acme \\"Rocket\\" Co" <billing@D>', 'Acme "Rocket" Co', /^From: "Acme \\"Rocket\\" Co" <billing@/m],
      ['"C:\\\\Users \\"x\\"" <billing@D>', 'C:\\Users "x"', /^From: "C:\\\\Users \\"x\\"" <billing@/m],
      ['"Jörg \\"JJ\\" Müller, CEO" <billing@D>', 'Jörg "JJ" Müller, CEO', /^From: =\?UTF-8\?/m],
    ]
    for (const [given, name, line] of cases) {
      const from = given.replace('@D', `@${domain}`)
      const raw = await delivered(email(from, { replyTo: from.replace('billing@', 'help@') }))
      const parsed = await simpleParser(raw)
      expect(parsed.from?.value, given).toEqual([{ name, address: `billing@${domain}` }])
      expect(parsed.replyTo?.value, given).toEqual([{ name, address: `help@${domain}` }])
      expect(headerBlock(raw), given).toMatch(line)
    }
    // A quote the name does not escape still ends it: not one mailbox, so refused as before.
    const open = await client.post('/v1/emails', live, email(`"Acme "Rocket" Co" <billing@${domain}>`))
    expect(open.status).toBe(400)
    expect(open.body.error).toMatchObject({ code: 'invalid_body', param: 'from' })
  })
})

describe('custom headers', () => {
  it('a header the service or the receiving servers own is invalid_header, not a second copy in the message', async () => {
    const owned = [
      'Sender',
      'Return-Path',
      'DKIM-Signature',
      'Received',
      'Authentication-Results',
      'ARC-Seal',
      'Resent-From',
      'Content-Transfer-Encoding',
      'Content-Disposition',
    ]
    for (const name of owned) {
      const value = name === 'Content-Transfer-Encoding' ? 'base64' : 'ceo@bank.test'
      const r = await client.post(
        '/v1/emails',
        live,
        email(`Billing <billing@${domain}>`, { headers: { [name]: value } }),
      )
      expect(r.status, name).toBe(400)
      expect(r.body.error, name).toMatchObject({ code: 'invalid_header', param: `headers.${name}` })
    }
  })

  it('headers of the sender’s own (List-Unsubscribe, In-Reply-To, X-…) reach the relay as given', async () => {
    const headers = {
      'List-Unsubscribe': `<https://${domain}/u/1>`,
      'In-Reply-To': `<abc@${domain}>`,
      'X-Entity-Ref': 'r-1',
    }
    const head = headerBlock(await delivered(email(`Billing <billing@${domain}>`, { headers })))
    for (const [k, v] of Object.entries(headers)) expect(head).toContain(`${k}: ${v}`)
  })
})

describe('control characters', () => {
  const from = () => `Billing <billing@${domain}>`

  it('in a subject or a custom header value are 400 (a tab is still text)', async () => {
    for (const ch of ['\u0007', '\u000b', '\u001b', '\u007f']) {
      const s = await client.post('/v1/emails', live, email(from(), { subject: `Hi${ch}there` }))
      expect(s.status).toBe(400)
      expect(s.body.error).toMatchObject({ code: 'invalid_body', param: 'subject' })
      const h = await client.post('/v1/emails', live, email(from(), { headers: { 'X-Ref': `a${ch}b` } }))
      expect(h.status).toBe(400)
      expect(h.body.error).toMatchObject({ code: 'invalid_header', param: 'headers.X-Ref' })
    }
    const head = headerBlock(
      await delivered(email(from(), { subject: 'Tab\there', headers: { 'X-Ref': 'a\tb' } })),
    )
    expect(head).toContain('Subject: Tab\there')
    expect(head).toContain('X-Ref: a\tb')
  })

  it('that template data puts in a rendered subject never reach the relay', async () => {
    const t = await client.post('/v1/templates', live, {
      name: 'ctl-subject',
      subject: 'Order {{ref}}',
      html: '<p>{{ref}}</p>',
    })
    expect(t.status, JSON.stringify(t.body)).toBe(201)
    const raw = await delivered({
      from: from(),
      to: 'alice@example.com',
      template: 'ctl-subject',
      data: { ref: 'A\u0007B\u001b[2JC' },
    })
    const subject = /^Subject: (.*)$/m.exec(headerBlock(raw))?.[1]
    expect(subject).toBe('Order AB[2JC')
  })
})

/** RFC 2047 Q encoded words, as a mail reader joins them (whitespace between words dropped). */
const decodeQWords = (field: string) =>
  Buffer.from(
    field
      .split(/\s+/)
      .map((w) => /^=\?UTF-8\?Q\?(.*)\?=$/i.exec(w)![1]!.replaceAll('_', ' '))
      .join('')
      .replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
    'latin1',
  ).toString('utf8')

describe('header line length', () => {
  it('a long header with spaces arrives folded into lines of at most 998 octets; an unbroken run that cannot be is 400', async () => {
    const value = 'word '.repeat(400).trim() // 1,999 bytes, the contract allows 2,048
    const raw = await delivered(email(`hi@${domain}`, { headers: { 'X-Long': value } }))
    for (const line of raw.split('\r\n')) expect(line.length).toBeLessThanOrEqual(998)
    expect((await simpleParser(raw)).headers.get('x-long')).toBe(value)

    const refused = await client.post(
      '/v1/emails',
      live,
      email(`hi@${domain}`, { headers: { References: `<${'a'.repeat(991)}@x.test>` } }),
    )
    expect(refused.status).toBe(400)
    expect(refused.body.error).toMatchObject({ code: 'invalid_header', param: 'headers.References' })
    const fits = await delivered(email(`hi@${domain}`, { headers: { 'X-Token': 'a'.repeat(990) } }))
    for (const line of fits.split('\r\n')) expect(line.length).toBeLessThanOrEqual(998)
  })

  it('an unstructured header of one 2,048-byte token arrives as encoded words that read back as the token', async () => {
    // A signed URL in a custom header: within the contract's 2,048 bytes, but no folding fits
    // it in a line (it was 400 invalid_header).
    const token = `https://files.example.com/r?sig=${'Ab0-_'.repeat(403)}`
    const raw = await delivered(email(`hi@${domain}`, { headers: { 'X-Signed-Url': token } }))
    for (const line of raw.split('\r\n')) expect(line.length).toBeLessThanOrEqual(998)
    const field = (await simpleParser(raw)).headers.get('x-signed-url') as string
    expect(field).toMatch(/^=\?UTF-8\?Q\?/)
    expect(decodeQWords(field)).toBe(token)
  })
})

describe('attachment fields', () => {
  const from = () => `Billing <billing@${domain}>`
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]).toString('base64')
  const notes = Buffer.from('Grüße\r\n', 'utf8')

  it('a control character, tab or backslash in a filename, a content id no header can hold or an overlong type is 400; a content id makes a part inline', async () => {
    const refused: Array<[Record<string, string>, string]> = [
      // Written into Content-Type and Content-Disposition as they were.
      [{ filename: 'report\u0007.pdf' }, 'filename'],
      [{ filename: 'a\u001b[2Jb.txt' }, 'filename'],
      // Quoted as a JSON string, "a<TAB>b.txt" arrived as "atb.txt"; a backslash went unescaped
      // into Content-Type's name ("C:\dir\x.txt" read as "C:dirx.txt").
      [{ filename: 'a\tb.txt' }, 'filename'],
      [{ filename: 'C:\\dir\\x.txt' }, 'filename'],
      [{ contentId: 'logo\u0001' }, 'contentId'],
      // Content-ID is a msg-id (RFC 2045 7): a non-ASCII one became an encoded word, and `<`/`>`
      // inside were dropped, so the html's cid: reference no longer found its image.
      [{ contentId: 'logo-é' }, 'contentId'],
      [{ contentId: 'a>b<c' }, 'contentId'],
      // RFC 6838 4.2: at most 127 characters each side; unbroken, it made a line over 998.
      [{ type: `application/${'x'.repeat(1200)}` }, 'type'],
    ]
    for (const [over, name] of refused) {
      const attachments = [{ filename: 'a.png', content: png, disposition: 'inline', ...over }]
      const r = await client.post('/v1/emails', live, email(from(), { attachments }))
      expect(r.status, JSON.stringify(over)).toBe(400)
      expect(r.body.error, JSON.stringify(over)).toMatchObject({
        code: 'invalid_attachment',
        param: `attachments.0.${name}`,
      })
    }

    const name = 'naïve "quoted"; name (1).txt'
    const raw = await delivered(
      email(from(), {
        html: '<img src="cid:logo@acme">',
        attachments: [
          // No disposition: a content id makes it inline, for the html's cid: reference.
          { filename: 'a.png', content: png, contentId: '<logo@acme>' },
          { filename: name, content: notes.toString('base64'), type: 'text/plain' },
        ],
      }),
    )
    const parts = allParts(parseMime(raw))
    const image = parts.find((p) => p.type === 'image/png')!
    expect(field(image, 'content-id')).toBe('<logo@acme>')
    expect(field(image, 'content-disposition')).toMatch(/^inline\b/)
    const txt = parts.find((p) => /^attachment/.test(field(p, 'content-disposition') ?? ''))!
    expect(rfc2231(field(txt, 'content-disposition'), 'filename')).toBe(name)
    expect(decodedBody(txt).equals(notes)).toBe(true)
    for (const p of parts) for (const f of p.fields) expect(f.lines.join('')).not.toMatch(/(?!\t)\p{Cc}/u)
  })
})
