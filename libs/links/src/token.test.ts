import { describe, expect, it } from 'vitest'
import { Links, linkUrlLength } from './links.js'
import { TokenSigner } from './token.js'

const signer = new TokenSigner('s'.repeat(32))

describe('TokenSigner', () => {
  it('round-trips every kind', () => {
    for (const t of [
      { kind: 'open', emailId: 'email_1' },
      { kind: 'click', emailId: 'email_1', url: 'https://example.com/a?b=c#d' },
      { kind: 'unsubscribe', projectId: 'proj_1', contactId: 'ct_1' },
    ] as const) {
      expect(signer.verify(signer.sign(t), t.kind)).toEqual(t)
    }
  })

  it('rejects a token of another kind, another secret, or a changed payload', () => {
    const open = signer.sign({ kind: 'open', emailId: 'email_1' })
    expect(signer.verify(open, 'click')).toBeNull()
    expect(new TokenSigner('t'.repeat(32)).verify(open, 'open')).toBeNull()
    const click = signer.sign({ kind: 'click', emailId: 'email_1', url: 'https://good.example' })
    const [, sig] = click.split('.')
    const forged = Buffer.from(JSON.stringify(['c', 'email_1', 'https://evil.example'])).toString('base64url')
    expect(signer.verify(`${forged}.${sig}`, 'click')).toBeNull()
  })

  it('returns null for garbage instead of throwing', () => {
    for (const bad of ['', '.', 'abc', 'a.b.c', '%%%.%%%', `${'a'.repeat(5000)}.x`, 'bm90IGpzb24.AAAA']) {
      expect(signer.verify(bad)).toBeNull()
    }
    // correctly signed but not a payload we make
    const weird = Buffer.from(JSON.stringify({ kind: 'open' })).toString('base64url')
    const mac = signer.sign({ kind: 'open', emailId: 'x' }).split('.')[1]
    expect(signer.verify(`${weird}.${mac}`)).toBeNull()
  })

  it('refuses short secrets', () => {
    expect(() => new TokenSigner('short')).toThrow()
  })
})

describe('Links', () => {
  const links = new Links({ publicUrl: 'https://mail.example.com/', secret: 'k'.repeat(20) })
  it('builds URLs under the public base that verify back', () => {
    const url = links.clickUrl('email_9', 'https://shop.example/x')
    expect(url.startsWith('https://mail.example.com/t/c/')).toBe(true)
    const token = url.slice('https://mail.example.com/t/c/'.length)
    expect(links.verify(token, 'click')).toEqual({
      kind: 'click',
      emailId: 'email_9',
      url: 'https://shop.example/x',
    })
    expect(links.openUrl('email_9')).toMatch(/^https:\/\/mail\.example\.com\/t\/o\/[\w-]+\.[\w-]+$/)
    expect(links.unsubscribeUrl('proj_1', 'ct_1')).toMatch(/^https:\/\/mail\.example\.com\/u\//)
  })
  it('knows its own URLs', () => {
    expect(links.isOwnUrl('https://mail.example.com/u/abc')).toBe(true)
    expect(links.isOwnUrl('https://mail.example.com.evil.io/u/abc')).toBe(false)
  })
})

describe('linkUrlLength', () => {
  it('is the length of the link Links makes, without the secret', () => {
    const links = new Links({ publicUrl: 'https://mail.example.com/', secret: 's'.repeat(32) })
    for (const t of [
      { kind: 'open', emailId: 'email_01KTOKENLENGTH0000000000' },
      { kind: 'click', emailId: 'email_01KTOKENLENGTH0000000000', url: 'https://x.example/ä?b="c"' },
      { kind: 'click', emailId: 'e', url: 'https://x.example/' },
      { kind: 'unsubscribe', projectId: 'proj_1', contactId: 'ct_12' },
    ] as const) {
      expect(linkUrlLength('https://mail.example.com', t)).toBe(links.url(t).length)
    }
  })
})
