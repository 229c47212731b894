import { createHash, randomBytes } from 'node:crypto'
import { waitFor } from '@mailer/testing'
import { dkimVerify } from 'mailauth/lib/dkim/verify'
import { simpleParser } from 'mailparser'
import { beforeAll, describe, expect, it } from 'vitest'
import { projectWithDomain, publishedDkimResolver } from '../support/emails.js'
import {
  allParts,
  decodedBody,
  decodeWords,
  encodedWords,
  field,
  headerFields,
  type Part,
  param,
  parseMime,
  rfc2231,
} from '../support/mime.js'
import type { Delivered } from '../support/smtp-relay.js'
import { useStack } from '../support/use-stack.js'

// What a receiving server gets, checked on the raw bytes the relay received (RFC 5321, 5322,
// 2045-2047, 2231, 6376) rather than on what a lenient parser makes of them: API → email service →
// dispatcher → a real SMTP server.
const { client, relay } = useStack(['auth', 'email', 'gateway'], {
  dispatcher: { RETRY_BASE_SECONDS: '0.2', BREAKER_MIN_CALLS: '10000' },
})
let live: string
let domain: string
let resolver: (name: string, type: string) => Promise<string[][]>
/** Every message checked here, for the DKIM test. */
const seen: Buffer[] = []

beforeAll(async () => {
  const p = await projectWithDomain(client, 'wire', 'mail.wire.test')
  live = p.live
  domain = p.domain
  resolver = await publishedDkimResolver(client, live)
})

/** Sends (202 expected) and waits until the email is final; answers what the relay received. */
async function sendAndCapture(input: Record<string, unknown>): Promise<{ id: string; got: Delivered[] }> {
  const sent = await client.post('/v1/emails', live, { text: 'x', ...input })
  expect(sent.status, JSON.stringify(sent.body)).toBe(202)
  const id = sent.body.id as string
  await waitFor(
    async () =>
      ['delivered', 'bounced', 'failed'].includes((await client.get(`/v1/emails/${id}`, live)).body.status),
    { timeoutMs: 20_000, what: `${id} final` },
  )
  const got = relay.forEmail(id)
  for (const d of got) seen.push(d.raw)
  return { id, got }
}

const head = (raw: Buffer) => {
  const s = raw.toString('latin1')
  return s.slice(0, s.indexOf('\r\n\r\n'))
}
/** RFC 5322 2.1.1: no line over 998 characters, CRLF excluded. */
const longLines = (raw: Buffer) =>
  raw
    .toString('latin1')
    .split('\r\n')
    .filter((l) => l.length > 998)

/** Custom headers that are folded, encoded or listed for DKIM, as a sender might give them. */
const CUSTOM = {
  'X-Long': 'word '.repeat(300).trim(),
  'X-Uni': 'Grüße aus Köln, '.repeat(20).trim(),
  'List-Unsubscribe': '<https://acme.test/u/abc>, <mailto:unsub@acme.test?subject=unsubscribe>',
  'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
  'X-Tab': 'a\tb',
}

describe('addresses', () => {
  it('Bcc in no header, every recipient once in the envelope, Cc and Reply-To present, display names encoded', async () => {
    const fromName = 'Müller, Jörg (Billing)'
    const { id, got } = await sendAndCapture({
      from: `"${fromName}" <billing@${domain}>`,
      to: ['Ann@Example.com', 'bob@example.com'],
      cc: ['carl@example.com', 'dora@example.com'],
      bcc: ['eve.hidden@example.com', 'frank.hidden@example.com'],
      replyTo: [`"Support, Team" <support@${domain}>`, `Zoë; Ops <ops@${domain}>`],
      subject: 'Addresses',
      headers: CUSTOM,
    })
    expect(got).toHaveLength(1)
    const d = got[0]!
    expect(d.envelopeFrom).toBe(`billing@${domain}`)
    expect(d.envelopeTo.sort()).toEqual([
      'ann@example.com',
      'bob@example.com',
      'carl@example.com',
      'dora@example.com',
      'eve.hidden@example.com',
      'frank.hidden@example.com',
    ])
    expect([...relay.deliveryCounts()].filter(([k]) => k.startsWith(id)).every(([, n]) => n === 1)).toBe(true)

    const fields = headerFields(head(d.raw))
    expect(head(d.raw)).not.toMatch(/hidden/i)
    expect(fields.map((f) => f.name)).not.toContain('bcc')
    const one = (name: string) => {
      const all = fields.filter((f) => f.name === name)
      expect(all, name).toHaveLength(1)
      return all[0]!.value.trim()
    }
    expect(one('to')).toBe('ann@example.com, bob@example.com')
    expect(one('cc')).toBe('carl@example.com, dora@example.com')
    // Specials and non-ASCII in a phrase travel as encoded words (RFC 2047 5(3)) or a quoted string.
    expect(one('from')).toMatch(new RegExp(`^(=\\?UTF-8\\?[QB]\\?\\S+\\?=\\s*)+<billing@${domain}>$`))
    expect(decodeWords(one('from').replace(/\s*<.*$/, ''))).toBe(fromName)
    expect(one('reply-to')).toContain(`"Support, Team" <support@${domain}>`)
    expect(head(d.raw).match(/.*[^\x20-\x7e\t\r\n].*/g)).toBeNull()

    // Custom headers arrive as given (folded at their spaces, non-ASCII as encoded words).
    for (const [name, value] of Object.entries(CUSTOM)) {
      expect(decodeWords(one(name.toLowerCase()).replace(/\r\n/g, '')), name).toBe(value)
      for (const line of fields.find((f) => f.name === name.toLowerCase())!.lines)
        expect(line.length).toBeLessThanOrEqual(78)
    }

    const mail = await simpleParser(d.raw)
    expect(mail.from?.value).toEqual([{ name: fromName, address: `billing@${domain}` }])
    expect((mail.replyTo as any).value).toEqual([
      { name: 'Support, Team', address: `support@${domain}` },
      { name: 'Zoë; Ops', address: `ops@${domain}` },
    ])
    expect(mail.bcc).toBeUndefined()
  })
})

describe('subject', () => {
  it('UTF-8 as RFC 2047 encoded words of at most 75 characters, folded; no line over 998 octets, a 998-character word included', async () => {
    const subjects = [
      `Grüße aus Köln — ${'ü'.repeat(300)} 😀 fin`,
      `${'日本語の件名'.repeat(30)}`,
      'x'.repeat(998),
      `Order ${'y'.repeat(992)}`,
      `${'z'.repeat(997)}é`,
      'Plain ASCII subject that is long enough to be folded by the renderer at one of its many spaces, '.repeat(
        9,
      ),
    ]
    for (const subject of subjects) {
      const { got } = await sendAndCapture({ from: `hi@${domain}`, to: 'sub@example.com', subject })
      const raw = got[0]!.raw
      expect(
        longLines(raw).map((l) => l.length),
        subject.slice(0, 20),
      ).toEqual([])
      const f = headerFields(head(raw)).find((x) => x.name === 'subject')!
      for (const w of encodedWords(f.value)) expect(w.length).toBeLessThanOrEqual(75)
      expect(decodeWords(f.value.trim()), subject.slice(0, 20)).toBe(subject.trim())
      expect((await simpleParser(raw)).subject).toBe(subject.trim())
    }
  })
})

const PDF = randomBytes(70_000)
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(3000)])
const NOTES = Buffer.from('Grüße\r\nLine two — ünïcödé\r\n', 'utf8')
const PDF_NAME = 'Rechnung März 2024 — überfällig.pdf'

/** The transfer encoding is one RFC 2045 allows and its lines are as long as it allows. */
function checkEncoding(p: Part): void {
  const cte = (field(p, 'content-transfer-encoding') ?? '7bit').toLowerCase()
  const lines = p.body.split('\r\n')
  if (cte === 'base64') {
    for (const l of lines) expect(l).toMatch(/^[A-Za-z0-9+/]{0,76}={0,2}$/)
    expect(lines.slice(0, -2).every((l) => l.length === 76)).toBe(true)
  } else if (cte === 'quoted-printable') {
    // RFC 2045 6.7: at most 76 characters, printable ASCII with `=` only as an escape or soft break.
    for (const l of lines) {
      expect(l.length).toBeLessThanOrEqual(76)
      expect(l).toMatch(/^([\x21-\x3c\x3e-\x7e \t]|=[0-9A-F]{2})*=?$/)
      expect(l).not.toMatch(/[ \t]$/)
    }
  } else {
    expect(cte).toBe('7bit')
    expect(/[\u0080-\u00ff]/.test(p.body)).toBe(false)
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(998)
  }
}

describe('bodies and attachments', () => {
  it('multipart/alternative with text before html in UTF-8, valid transfer encodings, attachments intact with RFC 2231 names and a Content-ID', async () => {
    const text = `Grüße, Ann\n${'y'.repeat(2000)}\n.\n..two dots\nFrom the start\nend  `
    const html = `<p>Grüße <b>Ann</b> ${'x'.repeat(3000)}</p>\n.\n<img src="cid:logo@acme">`
    const { got } = await sendAndCapture({
      from: `Billing <billing@${domain}>`,
      to: 'ann@example.com',
      subject: 'Your invoice',
      text,
      html,
      attachments: [
        { filename: PDF_NAME, content: PDF.toString('base64'), type: 'application/pdf' },
        {
          filename: 'logo.png',
          content: PNG.toString('base64'),
          disposition: 'inline',
          contentId: 'logo@acme',
        },
        { filename: 'notes.txt', content: NOTES.toString('base64') },
      ],
    })
    const raw = got[0]!.raw
    expect(longLines(raw)).toEqual([])
    const root = parseMime(raw.toString('latin1'))
    expect(field(root, 'mime-version')).toBe('1.0')
    expect(root.type).toBe('multipart/mixed')
    const parts = allParts(root)
    for (const p of parts.filter((x) => !x.type.startsWith('multipart/'))) checkEncoding(p)

    // RFC 2046 5.1.4: the last alternative is the preferred one, the plain text comes first.
    const alt = parts.find((p) => p.type === 'multipart/alternative')!
    expect(alt.parts.map((p) => p.type)).toEqual([
      'text/plain',
      expect.stringMatching(/^(text\/html|multipart\/related)$/),
    ])
    const textPart = alt.parts[0]!
    const htmlPart = parts.find((p) => p.type === 'text/html')!
    for (const p of [textPart, htmlPart])
      expect(param(field(p, 'content-type'), 'charset')?.toLowerCase()).toBe('utf-8')
    expect(decodedBody(textPart).toString('utf8')).toBe(text.replace(/\n/g, '\r\n'))
    expect(decodedBody(htmlPart).toString('utf8')).toBe(html.replace(/\n/g, '\r\n'))

    const byName = (name: string) =>
      parts.find((p) => {
        const cd = field(p, 'content-disposition')
        return (rfc2231(cd, 'filename') ?? param(cd, 'filename')) === name
      })!
    const pdf = byName(PDF_NAME)
    expect(pdf.type).toBe('application/pdf')
    expect(field(pdf, 'content-disposition')).toMatch(/^attachment;/)
    // RFC 2231: the non-ASCII name in the parameter's own encoding, not an encoded word.
    expect(rfc2231(field(pdf, 'content-disposition'), 'filename')).toBe(PDF_NAME)
    expect(createHash('sha256').update(decodedBody(pdf)).digest('hex')).toBe(
      createHash('sha256').update(PDF).digest('hex'),
    )
    const logo = byName('logo.png')
    expect(logo.type).toBe('image/png')
    expect(field(logo, 'content-id')).toBe('<logo@acme>')
    expect(field(logo, 'content-disposition')).toMatch(/^inline\b/)
    expect(decodedBody(logo).equals(PNG)).toBe(true)
    // The inline image sits with the html it belongs to (multipart/related, RFC 2387).
    const related = parts.find((p) => p.type === 'multipart/related')
    expect(related?.parts.map((p) => p.type)).toEqual(['text/html', 'image/png'])
    const notes = byName('notes.txt')
    expect(notes.type).toBe('text/plain')
    expect(decodedBody(notes).equals(NOTES)).toBe(true)
  })
})

describe('Message-ID and Date', () => {
  it('one Message-ID <emailId@domain> per email, the same on every attempt; a Date on each', async () => {
    let refusedOnce = false
    relay.rcpt = (address) => {
      if (address !== 'later@example.com' || refusedOnce) return 'accept'
      refusedOnce = true
      return { code: 451, message: '4.3.0 Try again' }
    }
    try {
      const a = await sendAndCapture({
        from: `hi@${domain}`,
        to: ['now@example.com', 'later@example.com'],
        subject: 'A',
      })
      const b = await sendAndCapture({ from: `hi@${domain}`, to: 'now@example.com', subject: 'B' })
      // The first attempt reached `now`, the retry `later` alone.
      expect(a.got.map((d) => d.envelopeTo)).toEqual([['now@example.com'], ['later@example.com']])
      const ids = [...a.got, ...b.got].map((d) =>
        headerFields(head(d.raw)).filter((f) => f.name === 'message-id'),
      )
      for (const list of ids) expect(list).toHaveLength(1)
      const [first, retry, other] = ids.map((list) => list[0]!.value.trim())
      expect(first).toBe(`<${a.id}@${domain}>`)
      expect(retry).toBe(first)
      expect(other).toBe(`<${b.id}@${domain}>`)
      for (const d of [...a.got, ...b.got]) {
        const dates = headerFields(head(d.raw)).filter((f) => f.name === 'date')
        expect(dates).toHaveLength(1)
        // RFC 5322 3.3 date-time, e.g. `Fri, 27 Nov 2026 07:15:57 +0000`.
        expect(dates[0]!.value.trim()).toMatch(
          /^[A-Z][a-z]{2}, \d{1,2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} [+-]\d{4}$/,
        )
        expect(Math.abs(Date.parse(dates[0]!.value) - Date.now())).toBeLessThan(10 * 60_000)
      }
    } finally {
      relay.rcpt = () => 'accept'
    }
  })
})

describe('DKIM', () => {
  it('every message verifies with an independent verifier, signing what a reader sees and nothing a relay adds', async () => {
    expect(seen.length).toBeGreaterThanOrEqual(8)
    for (const raw of seen) {
      const sig = headerFields(head(raw)).find((f) => f.name === 'dkim-signature')!
      const tags = Object.fromEntries(
        sig.value
          .replace(/\s+/g, '')
          .split(';')
          .filter(Boolean)
          .map((t) => [t.slice(0, t.indexOf('=')), t.slice(t.indexOf('=') + 1)]),
      )
      expect(tags).toMatchObject({ v: '1', a: 'rsa-sha256', c: 'relaxed/relaxed', d: domain })
      const signed = tags.h!.toLowerCase().split(':')
      const present = new Set(headerFields(head(raw)).map((f) => f.name))
      for (const name of [
        'from',
        'to',
        'cc',
        'reply-to',
        'subject',
        'date',
        'message-id',
        'mime-version',
        'content-type',
        'content-transfer-encoding',
        // RFC 8058 4: one-click unsubscribe counts only when both are signed.
        'list-unsubscribe',
        'list-unsubscribe-post',
      ])
        if (present.has(name)) expect(signed, name).toContain(name)
      for (const name of ['received', 'return-path', 'dkim-signature', 'bcc', 'x-spam-status'])
        expect(signed).not.toContain(name)

      // As a receiving server sees it, with the trace fields relays put on top.
      const relayed = Buffer.concat([
        Buffer.from(
          'Return-Path: <bounce@relay.test>\r\nReceived: from mailer (10.0.0.1) by relay.test with ESMTPS;\r\n Fri, 27 Nov 2026 07:15:57 +0000\r\nX-Spam-Status: No\r\n',
        ),
        raw,
      ])
      for (const message of [raw, relayed]) {
        const { results } = await dkimVerify(message, { resolver } as never)
        expect(results).toHaveLength(1)
        expect(results[0]).toMatchObject({ signingDomain: domain, status: { result: 'pass' } })
      }
    }
  })
})
