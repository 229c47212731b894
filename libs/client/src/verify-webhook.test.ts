import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  parseSignatureHeader,
  signWebhookPayload,
  verifyWebhook,
  WebhookVerificationError,
} from './verify-webhook.js'

const secret = 'whsec_abcdefghijklmnopqrstuvwxyz012345'
const body = JSON.stringify({
  id: 'evt_1',
  type: 'email.delivered',
  createdAt: '2026-01-01T00:00:00.000Z',
  data: { emailId: 'email_1' },
})
const t = 1_767_225_600
// Computed independently of the module: HMAC-SHA256 keyed by the whole secret, over `<t>.<body>`.
const hmac = (s: string, ts: number, b: string) => createHmac('sha256', s).update(`${ts}.${b}`).digest('hex')
const header = (v: string) => ({ 'Service-Signature': v })

function failure(fn: () => unknown): string {
  try {
    fn()
  } catch (e) {
    if (e instanceof WebhookVerificationError) return e.reason
    throw e
  }
  throw new Error('expected a WebhookVerificationError')
}

describe('verifyWebhook', () => {
  it('refuses a body already parsed (express.json()) with a verification error saying to pass the raw body', () => {
    const parsed = JSON.parse(body) as unknown as string
    let err: unknown
    try {
      verifyWebhook(secret, header(`t=${t},v1=${hmac(secret, t, body)}`), parsed, { now: t })
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(WebhookVerificationError)
    expect((err as WebhookVerificationError).reason).toBe('invalid_payload')
    expect((err as Error).message).toMatch(/raw request body/)
    expect((err as Error).message).toContain("express.raw({ type: 'application/json' })")
  })

  it('accepts a valid signature and returns the parsed event', () => {
    const event = verifyWebhook(secret, header(`t=${t},v1=${hmac(secret, t, body)}`), body, { now: t })
    expect(event).toMatchObject({ id: 'evt_1', type: 'email.delivered' })
  })

  it('signs with the whole secret, whsec_ prefix included, nothing decoded', () => {
    expect(signWebhookPayload(secret, t, body)).toBe(hmac(secret, t, body))
    const stripped = hmac(secret.slice('whsec_'.length), t, body)
    expect(failure(() => verifyWebhook(secret, header(`t=${t},v1=${stripped}`), body, { now: t }))).toBe(
      'signature_mismatch',
    )
  })

  it('accepts a match on any of several v1 values', () => {
    const good = hmac(secret, t, body)
    const v = `t=${t},v1=${'0'.repeat(64)},v1=deadbeef,v1=${good}`
    expect(verifyWebhook(secret, header(v), body, { now: t }).id).toBe('evt_1')
  })

  it('splits each part on its first = only, and ignores unknown parts', () => {
    expect(parseSignatureHeader('t=5,v0=x=y,v1=ab=cd')).toEqual({ t: 5, v1: ['ab=cd'] })
    expect(parseSignatureHeader('v1=ab')).toBeNull()
    expect(parseSignatureHeader('t=abc,v1=ab')).toBeNull()
  })

  it('rejects a timestamp more than the tolerance away, either side, and accepts the edge', () => {
    const sig = header(`t=${t},v1=${hmac(secret, t, body)}`)
    expect(verifyWebhook(secret, sig, body, { now: t + 300 }).id).toBe('evt_1')
    expect(verifyWebhook(secret, sig, body, { now: t - 300 }).id).toBe('evt_1')
    expect(failure(() => verifyWebhook(secret, sig, body, { now: t + 301 }))).toBe(
      'timestamp_out_of_tolerance',
    )
    expect(failure(() => verifyWebhook(secret, sig, body, { now: t - 301 }))).toBe(
      'timestamp_out_of_tolerance',
    )
    expect(verifyWebhook(secret, sig, body, { now: t + 500, toleranceSeconds: 600 }).id).toBe('evt_1')
    expect(verifyWebhook(secret, sig, body, { now: new Date((t + 10) * 1000) }).id).toBe('evt_1')
  })

  it('rejects a changed body, another secret, a missing or malformed header', () => {
    const v1 = hmac(secret, t, body)
    expect(failure(() => verifyWebhook(secret, header(`t=${t},v1=${v1}`), `${body} `, { now: t }))).toBe(
      'signature_mismatch',
    )
    expect(failure(() => verifyWebhook(`${secret}x`, header(`t=${t},v1=${v1}`), body, { now: t }))).toBe(
      'signature_mismatch',
    )
    expect(failure(() => verifyWebhook(secret, {}, body, { now: t }))).toBe('missing_signature')
    expect(failure(() => verifyWebhook(secret, header(`v1=${v1}`), body, { now: t }))).toBe(
      'malformed_signature',
    )
    // The signed time is part of the signature: moving t breaks it.
    expect(failure(() => verifyWebhook(secret, header(`t=${t + 1},v1=${v1}`), body, { now: t }))).toBe(
      'signature_mismatch',
    )
  })

  it('reads fetch Headers and Node header objects in any case, and raw bytes', () => {
    const v = `t=${t},v1=${hmac(secret, t, body)}`
    expect(verifyWebhook(secret, new Headers({ 'service-signature': v }), body, { now: t }).id).toBe('evt_1')
    expect(verifyWebhook(secret, { 'service-signature': v }, Buffer.from(body), { now: t }).id).toBe('evt_1')
    expect(
      verifyWebhook(secret, { 'SERVICE-SIGNATURE': v }, new TextEncoder().encode(body), { now: t }).id,
    ).toBe('evt_1')
  })

  it('a valid signature over a body that is not JSON is invalid_payload', () => {
    const raw = 'not json'
    expect(
      failure(() => verifyWebhook(secret, header(`t=${t},v1=${hmac(secret, t, raw)}`), raw, { now: t })),
    ).toBe('invalid_payload')
  })

  it('needs a secret', () => {
    expect(() => verifyWebhook('', header('t=1,v1=a'), body)).toThrow(TypeError)
  })

  it('bad time options are an error, never a check switched off', () => {
    const old = t - 10_000_000 // about 115 days before `t`
    const v = header(`t=${old},v1=${hmac(secret, old, body)}`)
    expect(() => verifyWebhook(secret, v, body, { now: t, toleranceSeconds: Number.NaN })).toThrow(TypeError)
    expect(() => verifyWebhook(secret, v, body, { now: new Date('not a date') })).toThrow(TypeError)
    expect(() => verifyWebhook(secret, v, body, { now: t, toleranceSeconds: -1 })).toThrow(TypeError)
    expect(failure(() => verifyWebhook(secret, v, body, { now: t }))).toBe('timestamp_out_of_tolerance')
  })
})
