import { describe, expect, it } from 'vitest'
import { checkAttachments, checkSize, decodedSize, typeFor } from './attachments.js'
import { checkHeaders } from './headers.js'
import { checkSuppression, collectRecipients, resolveSender } from './recipients.js'
import { checkSchedule } from './schedule.js'

const domains = new Map([
  ['acme.test', 'verified'],
  ['xn--bcher-kva.test', 'verified'],
  ['new.test', 'pending'],
])

describe('resolveSender', () => {
  it('accepts a bare address or a named one on a project domain, falling back to defaultFrom', () => {
    expect(resolveSender('Acme <Hi@ACME.test>', null, domains, true)).toBe('Acme <Hi@ACME.test>')
    expect(resolveSender(undefined, 'news@acme.test', domains, true)).toBe('news@acme.test')
  })

  it('finds an internationalised sender domain under the punycode form its setup stored', () => {
    expect(resolveSender('Bücher <a@Bücher.test>', null, domains, true)).toBe('Bücher <a@Bücher.test>')
    expect(resolveSender('a@xn--bcher-kva.test', null, domains, true)).toBe('a@xn--bcher-kva.test')
    expect(() => resolveSender('a@bücherei.test', null, domains, true)).toThrow(
      expect.objectContaining({ code: 'invalid_sender', param: 'from' }),
    )
  })

  it('rejects other domains, unverified domains (live only) and a missing sender', () => {
    expect(() => resolveSender('a@other.test', null, domains, false)).toThrow(
      expect.objectContaining({ code: 'invalid_sender', param: 'from' }),
    )
    expect(() => resolveSender('a@new.test', null, domains, true)).toThrow(
      expect.objectContaining({ code: 'domain_not_verified' }),
    )
    expect(resolveSender('a@new.test', null, domains, false)).toBe('a@new.test')
    expect(() => resolveSender(undefined, null, domains, true)).toThrow(
      expect.objectContaining({ code: 'invalid_body', param: 'from' }),
    )
    expect(() => resolveSender('a@sub.acme.test', null, domains, true)).toThrow(
      expect.objectContaining({ code: 'invalid_sender' }),
    )
  })
})

describe('collectRecipients', () => {
  it('lower-cases and de-duplicates across to, cc and bcc, first mention winning', () => {
    expect(
      collectRecipients({ to: ['A@x.test'], cc: ['a@x.test', 'B@x.test'], bcc: ['b@X.test', 'c@x.test'] }),
    ).toEqual([
      { address: 'a@x.test', kind: 'to' },
      { address: 'b@x.test', kind: 'cc' },
      { address: 'c@x.test', kind: 'bcc' },
    ])
  })

  it('allows 50 and rejects 51, naming the list that went over', () => {
    const to = Array.from({ length: 50 }, (_, i) => `r${i}@x.test`)
    expect(collectRecipients({ to })).toHaveLength(50)
    expect(() => collectRecipients({ to, bcc: ['one@more.test'] })).toThrow(
      expect.objectContaining({ code: 'too_many_recipients', param: 'bcc' }),
    )
  })

  it('a suppressed recipient is 422 with the address as param', () => {
    expect(() =>
      checkSuppression(collectRecipients({ to: ['ok@x.test', 'Gone@x.test'] }), new Set(['gone@x.test'])),
    ).toThrow(expect.objectContaining({ code: 'recipient_suppressed', status: 422, param: 'gone@x.test' }))
  })
})

describe('checkHeaders', () => {
  it('accepts custom headers and rejects reserved names case-insensitively', () => {
    expect(checkHeaders({ 'X-Tag': 'a', 'List-Unsubscribe': '<mailto:u@x.test>' })).toEqual({
      'X-Tag': 'a',
      'List-Unsubscribe': '<mailto:u@x.test>',
    })
    for (const name of [
      'from',
      'TO',
      'Cc',
      'bcc',
      'Subject',
      'Reply-To',
      'date',
      'Message-ID',
      'content-type',
      'MIME-Version',
    ]) {
      expect(() => checkHeaders({ [name]: 'x' })).toThrow(
        expect.objectContaining({ code: 'invalid_header', param: `headers.${name}` }),
      )
    }
  })

  it('refuses a name given twice in two cases: one field, which a message may hold once', () => {
    expect(() => checkHeaders({ 'In-Reply-To': '<a@x.test>', 'in-reply-to': '<b@x.test>' })).toThrow(
      expect.objectContaining({ code: 'invalid_header', param: 'headers.in-reply-to' }),
    )
    expect(checkHeaders({ 'X-A': 'a', 'X-B': 'b' })).toEqual({ 'X-A': 'a', 'X-B': 'b' })
  })

  it('measures the value limit in bytes', () => {
    expect(checkHeaders({ 'X-A': 'é'.repeat(1024) })['X-A']).toHaveLength(1024)
    expect(() => checkHeaders({ 'X-A': 'é'.repeat(1025) })).toThrow(
      expect.objectContaining({ code: 'invalid_header' }),
    )
  })

  it('takes an unbroken ASCII run up to the value limit in an X- field, not in others or a name', () => {
    const run = (n: number) => 'a'.repeat(n)
    expect(checkHeaders({ 'X-A': `${run(990)} ${run(990)}` })['X-A']).toHaveLength(1981)
    expect(checkHeaders({ 'X-A': `${run(990)}é` })['X-A']).toHaveLength(991)
    expect(checkHeaders({ 'X-A': run(2048) })['X-A']).toHaveLength(2048)
    for (const name of ['References', 'In-Reply-To', 'List-Unsubscribe', 'Autocrypt'])
      for (const value of [run(991), `x ${run(991)}`, `${run(500)}\t${run(991)}`]) {
        expect(() => checkHeaders({ [name]: value })).toThrow(
          expect.objectContaining({ code: 'invalid_header', param: `headers.${name}` }),
        )
      }
    expect(() => checkHeaders({ [`X-${run(989)}`]: 'v' })).toThrow(
      expect.objectContaining({ code: 'invalid_header' }),
    )
  })
})

describe('attachments and size', () => {
  it('decodes sizes and guesses types', () => {
    expect(decodedSize(Buffer.from('hello').toString('base64'))).toBe(5)
    expect(decodedSize(Buffer.from('hell').toString('base64'))).toBe(4)
    expect(typeFor('Report.PDF')).toBe('application/pdf')
    expect(typeFor('noext')).toBe('application/octet-stream')
  })

  it('keeps base64 without whitespace and defaults disposition', () => {
    const [a] = checkAttachments([{ filename: 'a.txt', content: 'aGVs\nbG8=' }])
    expect(a).toEqual({
      filename: 'a.txt',
      content: 'aGVsbG8=',
      type: 'text/plain',
      disposition: 'attachment',
      contentId: null,
      size: 5,
    })
  })

  it('refuses content of nothing but whitespace, as it refuses an empty one', () => {
    for (const content of [' ', '\n\t ']) {
      expect(() =>
        checkAttachments([
          { filename: 'a.txt', content: 'aGk=' },
          { filename: 'b.txt', content },
        ]),
      ).toThrow(expect.objectContaining({ code: 'invalid_attachment', param: 'attachments.1.content' }))
    }
  })

  it('takes base64 quads with a last one of 2-3 characters, padded or not, and nothing else', () => {
    for (const content of ['QQ==', 'QUI=', 'QUJD', 'QQ', 'QUI', 'QUJDQQ==', 'a+/9'])
      expect(checkAttachments([{ filename: 'a.bin', content }])[0]!.content).toBe(content)
    for (const content of ['Q', 'QQ=', 'QUJD=', 'Q===', 'QQ==QQ==', 'QU=I', 'QUJDQ', 'QUJ-', 'QUJ_'])
      expect(() => checkAttachments([{ filename: 'a.bin', content }])).toThrow(
        expect.objectContaining({ code: 'invalid_attachment', param: 'attachments.0.content' }),
      )
  })

  it('takes a file of 7 MB (the regex it was checked with ran out of stack from 4 MB: a 500)', () => {
    const bytes = 7 * 1024 * 1024
    const [a] = checkAttachments([
      { filename: 'big.bin', content: Buffer.alloc(bytes, 7).toString('base64') },
    ])
    expect(a!.size).toBe(bytes)
  })

  it('payload_too_large is a 400 naming the part that crossed the limit', () => {
    expect(() => checkSize('x'.repeat(60), 'y'.repeat(50), [], 100)).toThrow(
      expect.objectContaining({ code: 'payload_too_large', status: 400, param: 'text' }),
    )
    expect(() => checkSize('x'.repeat(100), null, [], 100)).not.toThrow()
  })
})

describe('checkSchedule', () => {
  const now = new Date('2026-05-01T12:00:00Z')
  it('accepts a future time with an offset up to 30 days ahead', () => {
    expect(checkSchedule('2026-05-01T16:00:00+02:00', now)?.toISOString()).toBe('2026-05-01T14:00:00.000Z')
    expect(checkSchedule('2026-05-31T12:00:00Z', now)?.toISOString()).toBe('2026-05-31T12:00:00.000Z')
    // ISO 8601 lets the seconds be left out.
    expect(checkSchedule('2026-05-01T16:30+02:00', now)?.toISOString()).toBe('2026-05-01T14:30:00.000Z')
    expect(checkSchedule('2026-05-02T09:05Z', now)?.toISOString()).toBe('2026-05-02T09:05:00.000Z')
    expect(checkSchedule(undefined, now)).toBeNull()
  })

  it('rejects the past, now, no offset and more than 30 days', () => {
    for (const v of [
      '2026-05-01T12:00:00Z',
      '2026-05-01T13:00:00',
      '2026-05-01T13:00',
      '2026-05-01T13Z',
      '2026-05-31T12:00:01Z',
      'soon',
      5,
    ]) {
      expect(() => checkSchedule(v, now)).toThrow(
        expect.objectContaining({ code: 'invalid_schedule', param: 'scheduledAt' }),
      )
    }
  })
})
