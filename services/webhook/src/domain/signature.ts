import { createHmac, randomInt, timingSafeEqual } from 'node:crypto'

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** `whsec_` + 32 random base62 characters (contract.md part 4). */
export function generateSecret(): string {
  let s = 'whsec_'
  for (let i = 0; i < 32; i++) s += BASE62[randomInt(BASE62.length)]
  return s
}

/**
 * Lowercase hex HMAC-SHA256 of `<t>.<raw body>`, keyed by the whole secret string as UTF-8
 * (prefix included, nothing decoded) — interface.md part 6.
 */
export function computeSignature(secret: string, t: number, body: string | Buffer): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${t}.`, 'utf8').update(body).digest('hex')
}

/** The `Service-Signature` value for one attempt; `t` is the signing time, set on every attempt. */
export function signatureHeader(secret: string, body: string, nowMs: number = Date.now()): string {
  const t = Math.floor(nowMs / 1000)
  return `t=${t},v1=${computeSignature(secret, t, body)}`
}

/** Splits `t=…,v1=…,v1=…` on `,` and each part on the first `=`. */
export function parseSignatureHeader(header: string): { t: number | null; v1: string[] } {
  let t: number | null = null
  const v1: string[] = []
  for (const part of header.split(',')) {
    const i = part.indexOf('=')
    if (i < 0) continue
    const k = part.slice(0, i).trim()
    const v = part.slice(i + 1).trim()
    if (k === 't' && /^\d+$/.test(v)) t = Number(v)
    else if (k === 'v1') v1.push(v)
  }
  return { t, v1 }
}

/**
 * What a receiver does (docs/webhooks.md): reject a `t` more than `toleranceSeconds` away from
 * its clock, accept when any `v1` equals the HMAC of the raw body, compared in constant time.
 */
export function verifySignature(
  header: string,
  secret: string,
  body: string | Buffer,
  nowMs = Date.now(),
  toleranceSeconds = 300,
): boolean {
  const { t, v1 } = parseSignatureHeader(header)
  if (t === null || Math.abs(nowMs / 1000 - t) > toleranceSeconds) return false
  const expected = Buffer.from(computeSignature(secret, t, body), 'utf8')
  return v1.some((candidate) => {
    const got = Buffer.from(candidate, 'utf8')
    return got.length === expected.length && timingSafeEqual(got, expected)
  })
}
