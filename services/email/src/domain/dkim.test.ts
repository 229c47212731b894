import { createPublicKey, createSign, createVerify } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  dkimRecordName,
  dkimRecordValue,
  dkimSelector,
  generateDkimKey,
  matchesDkim,
  parseDkimTags,
} from './dkim.js'

describe('DKIM keys', () => {
  it('makes a 2048-bit RSA pair whose public half is the p= value', async () => {
    const key = await generateDkimKey()
    const pub = createPublicKey({ key: Buffer.from(key.publicKeyB64, 'base64'), format: 'der', type: 'spki' })
    expect(pub.asymmetricKeyType).toBe('rsa')
    expect(pub.asymmetricKeyDetails?.modulusLength).toBe(2048)
    const sig = createSign('sha256').update('hello').sign(key.privateKeyPem)
    expect(createVerify('sha256').update('hello').verify(pub, sig)).toBe(true)
    expect(key.privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----/)
  })

  it('names the selector after the UTC time and builds the record', () => {
    expect(dkimSelector(new Date('2026-03-04T05:06:07.890Z'))).toBe('mailer20260304050607')
    expect(dkimRecordName('mailer20260304050607', 'example.com')).toBe(
      'mailer20260304050607._domainkey.example.com',
    )
    expect(dkimRecordValue('QUJD')).toBe('v=DKIM1; k=rsa; p=QUJD')
  })

  it('never picks a selector already used for the domain', () => {
    const at = new Date('2026-03-04T05:06:07.890Z')
    expect(dkimSelector(at, new Set(['mailer20260304050607']))).toBe('mailer20260304050607-2')
    expect(dkimSelector(at, new Set(['mailer20260304050607', 'mailer20260304050607-2']))).toBe(
      'mailer20260304050607-3',
    )
    expect(dkimSelector(at, new Set(['mailer20260304050606']))).toBe('mailer20260304050607')
  })
})

describe('DKIM TXT matching', () => {
  it('parses tags, dropping whitespace folded into values', () => {
    const tags = parseDkimTags('v=DKIM1; k=rsa;\n p=AB CD\tEF; t=y')
    expect(tags.get('v')).toBe('DKIM1')
    expect(tags.get('p')).toBe('ABCDEF')
    expect(tags.get('t')).toBe('y')
  })

  it('matches a record carrying our key, with or without optional tags', () => {
    expect(matchesDkim(['v=DKIM1; k=rsa; p=QUJD'], 'QUJD')).toBe(true)
    expect(matchesDkim(['p=QUJD'], 'QUJD')).toBe(true)
    expect(matchesDkim(['v=DKIM1;k=rsa;p=QU JD;'], 'QUJD')).toBe(true)
    expect(matchesDkim(['unrelated', 'v=DKIM1; p=QUJD'], 'QUJD')).toBe(true)
  })

  it('rejects another key, a revoked key, a wrong version or key type', () => {
    expect(matchesDkim(['v=DKIM1; k=rsa; p=WFla'], 'QUJD')).toBe(false)
    expect(matchesDkim(['v=DKIM1; k=rsa; p='], 'QUJD')).toBe(false)
    expect(matchesDkim(['v=DKIM2; k=rsa; p=QUJD'], 'QUJD')).toBe(false)
    expect(matchesDkim(['v=DKIM1; k=ed25519; p=QUJD'], 'QUJD')).toBe(false)
    expect(matchesDkim([], 'QUJD')).toBe(false)
  })
})
