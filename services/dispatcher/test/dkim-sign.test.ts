import { generateKeyPairSync } from 'node:crypto'
import { dkimVerify } from 'mailauth/lib/dkim/verify'
import { describe, expect, it } from 'vitest'
import { dkimSign, relaxedBody } from '../src/domain/dkim-sign.js'
import { Renderer } from '../src/infra/relay.js'

// Every signature is checked by an independent verifier (mailauth) against the published key.
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
const key = { domainName: 'mail.acme.test', keySelector: 's1', privateKey }
const txt = `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`
const resolver = async (name: string, type: string) => {
  if (type === 'TXT' && name === 's1._domainkey.mail.acme.test') return [[txt]]
  throw Object.assign(new Error(`no ${type} record for ${name}`), { code: 'ENOTFOUND' })
}

async function verify(raw: Buffer) {
  const { results } = await dkimVerify(raw, { resolver } as never)
  expect(results).toHaveLength(1)
  return results[0] as { status: { result: string }; signingDomain: string; selector: string }
}

const crlf = (lines: string[]) => Buffer.from(lines.join('\r\n'), 'utf8')

describe('dkimSign', () => {
  it('signs a message nodemailer rendered (alternatives, attachment, custom headers): the signature verifies', async () => {
    const raw = await new Renderer().render({
      from: 'Acme <billing@mail.acme.test>',
      to: ['a@x.test'],
      cc: ['c@x.test'],
      replyTo: ['support@acme.test'],
      subject: `A long subject that nodemailer folds over more than one line ${'x'.repeat(80)} — ünïcode`,
      messageId: '<email_1@mail.acme.test>',
      headers: { 'X-Campaign': 'spring', 'List-Unsubscribe': '<https://acme.test/u/1>' },
      html: '<p>Hello <b>there</b></p>',
      text: 'Hello there\n\n\n',
      attachments: [{ filename: 'a.txt', content: 'aGVsbG8=', encoding: 'base64' }],
      envelope: { from: 'billing@mail.acme.test', to: ['a@x.test'] },
    })
    // Every line ends with CRLF, the text part's bare LFs included.
    expect(/\r(?!\n)|(?<!\r)\n/.test(raw.toString('latin1'))).toBe(false)
    expect(raw.toString()).toContain('Hello there\r\n\r\n\r\n')
    const signed = dkimSign(raw, key)
    expect(signed.subarray(0, 15).toString()).toBe('DKIM-Signature:')
    expect(await verify(signed)).toMatchObject({
      signingDomain: 'mail.acme.test',
      selector: 's1',
      status: { result: 'pass' },
    })
  })

  it('verifies whatever the whitespace: runs of spaces and tabs, trailing blanks, empty lines at the end, 8-bit text', async () => {
    const raw = crlf([
      'From: a@mail.acme.test',
      'To:   b@x.test ,',
      '\tc@x.test',
      'Subject: \t spaced   out\t ',
      'Cc: first@x.test',
      'Cc: second@x.test',
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: 8bit',
      '',
      'line with trailing blanks   \t',
      '  leading   and\t\tinner runs',
      'Grüße aus Köln',
      '',
      '   ',
      '',
      '',
    ])
    expect(await verify(dkimSign(raw, key))).toMatchObject({ status: { result: 'pass' } })
  })

  it('verifies a message without a body, and fails once the signed message is changed', async () => {
    const empty = crlf(['From: a@mail.acme.test', 'Subject: nothing', '', ''])
    expect(await verify(dkimSign(empty, key))).toMatchObject({ status: { result: 'pass' } })

    const signed = dkimSign(crlf(['From: a@mail.acme.test', 'Subject: pay 10', '', 'pay 10 EUR', '']), key)
    const tampered = Buffer.from(signed.toString('latin1').replace('pay 10 EUR', 'pay 99 EUR'), 'latin1')
    expect((await verify(tampered)).status.result).not.toBe('pass')
    const retitled = Buffer.from(
      signed.toString('latin1').replace('Subject: pay 10', 'Subject: pay 99'),
      'latin1',
    )
    expect((await verify(retitled)).status.result).not.toBe('pass')
  })

  it('oversigns: a Reply-To, Cc or List-Unsubscribe added, or a second Subject or From above ours, breaks the signature', async () => {
    const raw = await new Renderer().render({
      from: 'Acme <billing@mail.acme.test>',
      to: ['a@x.test'],
      subject: 'Your invoice',
      messageId: '<email_2@mail.acme.test>',
      text: 'Pay to the usual account.',
      envelope: { from: 'billing@mail.acme.test', to: ['a@x.test'] },
    })
    const signed = dkimSign(raw, key)
    expect(await verify(signed)).toMatchObject({ status: { result: 'pass' } })
    const signature = signed.subarray(0, signed.length - raw.length)
    /** The signed message with `lines` above its own header fields (below the signature). */
    const above = (...lines: string[]) =>
      Buffer.concat([signature, Buffer.from(`${lines.join('\r\n')}\r\n`), raw])
    /** The signed message with `line` after its last header field. */
    const below = (line: string) =>
      Buffer.from(signed.toString('latin1').replace('\r\n\r\n', `\r\n${line}\r\n\r\n`), 'latin1')
    const tampered = {
      'an added Reply-To': above('Reply-To: <pay@attacker.test>'),
      'a second Subject on top': above('Subject: New bank details'),
      'a second From on top': above('From: CEO <ceo@acme.test>'),
      'a Cc below': below('Cc: watcher@attacker.test'),
      'an added List-Unsubscribe': above('List-Unsubscribe: <https://attacker.test/u>'),
    }
    for (const [what, message] of Object.entries(tampered))
      expect([what, (await verify(message)).status.result]).not.toEqual([what, 'pass'])
    // A field nobody reads as the author's (a relay's trace) leaves it valid.
    expect(await verify(above('Received: from relay.test by mx.test'))).toMatchObject({
      status: { result: 'pass' },
    })
    const h = /\bh=([^;]+);/.exec(signature.toString('latin1').replace(/\r\n\s/g, ''))![1]!.split(':')
    // Present once, named twice; absent, named once: both sign "no further instance".
    expect(h.filter((n) => n === 'subject')).toHaveLength(2)
    expect(h.filter((n) => n === 'reply-to')).toHaveLength(1)
  })
})

describe('relaxedBody', () => {
  it('follows RFC 6376 3.4.4 (its example: " C \\r\\nD \\t E\\r\\n\\r\\n\\r\\n")', () => {
    expect(relaxedBody(' C \r\nD \t E\r\n\r\n\r\n')).toBe(' C\r\nD E\r\n')
    expect(relaxedBody('')).toBe('')
    expect(relaxedBody('\r\n\r\n')).toBe('')
    expect(relaxedBody('no final line end')).toBe('no final line end\r\n')
  })

  it('reads a long run of spaces once (sized so the old two-pass version outran the test timeout)', () => {
    expect(relaxedBody(`${' '.repeat(300_000)}x`)).toBe(' x\r\n')
    expect(relaxedBody(`a${' \t'.repeat(150_000)}\r\nb`)).toBe('a\r\nb\r\n')
  })

  it('gives what the two steps of RFC 6376 give (trailing WSP removed, other runs made one space)', () => {
    const twoSteps = (s: string) => s.replace(/[ \t]+\r\n/g, '\r\n').replace(/[ \t]+/g, ' ')
    const parts = [' ', '\t', '\r\n', '\r', '\n', 'a', 'b ']
    for (let seed = 1; seed <= 2_000; seed++) {
      let x = seed
      let body = ''
      for (let i = 0; i < 12; i++) {
        x = (x * 1103515245 + 12345) % 2147483648
        body += parts[x % parts.length]
      }
      const kept = relaxedBody(body)
      const trimmed = body.replace(/[\r\n \t]+$/, '')
      expect(kept).toBe(trimmed === '' ? '' : `${twoSteps(trimmed)}\r\n`)
    }
  })
})
