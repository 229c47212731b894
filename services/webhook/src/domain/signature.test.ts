import { createHmac } from 'node:crypto'
import { WEBHOOK_SECRET_RE } from '@mailer/contracts'
import { describe, expect, it } from 'vitest'
import {
  computeSignature,
  generateSecret,
  parseSignatureHeader,
  signatureHeader,
  verifySignature,
} from './signature.js'

const secret = 'whsec_abcdefghijklmnopqrstuvwxyz012345'
const body = '{"id":"evt_1","type":"email.delivered","createdAt":"2026-01-01T00:00:00.000Z","data":{}}'

describe('generateSecret', () => {
  it('is whsec_ + 32 base62 characters, different every time', () => {
    const a = generateSecret()
    expect(a).toMatch(WEBHOOK_SECRET_RE)
    expect(generateSecret()).not.toBe(a)
  })
})

describe('signatures', () => {
  it('is the hex HMAC-SHA256 of "<t>.<body>" keyed by the whole secret string', () => {
    const expected = createHmac('sha256', secret).update(`1700000000.${body}`).digest('hex')
    expect(computeSignature(secret, 1700000000, body)).toBe(expected)
    expect(expected).toMatch(/^[0-9a-f]{64}$/)
  })

  it('builds t=<unix seconds>,v1=<hex> from the signing time', () => {
    const h = signatureHeader(secret, body, 1_700_000_000_900)
    expect(h).toBe(`t=1700000000,v1=${computeSignature(secret, 1700000000, body)}`)
    expect(parseSignatureHeader(h)).toEqual({
      t: 1700000000,
      v1: [computeSignature(secret, 1700000000, body)],
    })
  })

  it('verifies within 300 s, accepts any of several v1, rejects tampering and old timestamps', () => {
    const now = 1_700_000_000_000
    const h = signatureHeader(secret, body, now)
    expect(verifySignature(h, secret, body, now + 299_000)).toBe(true)
    expect(verifySignature(h, secret, body, now + 301_000)).toBe(false)
    expect(verifySignature(`${h.split(',')[0]},v1=deadbeef,${h.split(',')[1]}`, secret, body, now)).toBe(true)
    expect(verifySignature(h, secret, body.replace('evt_1', 'evt_2'), now)).toBe(false)
    expect(verifySignature(h, 'whsec_other', body, now)).toBe(false)
    expect(verifySignature('v1=abc', secret, body, now)).toBe(false)
  })
})
