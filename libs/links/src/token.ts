import { createHmac, timingSafeEqual } from 'node:crypto'
import { z } from 'zod'

/**
 * What a public link stands for. Everything a link acts on is inside the signed token, so the
 * public routes need no lookup to trust it, and a click link cannot be pointed at another URL.
 */
export type LinkToken =
  | { kind: 'open'; emailId: string }
  | { kind: 'click'; emailId: string; url: string }
  | { kind: 'unsubscribe'; projectId: string; contactId: string }

export type LinkKind = LinkToken['kind']

// Compact positional payloads keep the tokens (and so the URLs in every email) short.
const Wire = z.union([
  z.tuple([z.literal('o'), z.string().min(1)]),
  z.tuple([z.literal('c'), z.string().min(1), z.string().min(1)]),
  z.tuple([z.literal('u'), z.string().min(1), z.string().min(1)]),
])
type Wire = z.infer<typeof Wire>

/** 128 bits of HMAC-SHA256: far beyond guessing, and half the characters of the full digest. */
const SIG_BYTES = 16
/** Domain separation: a signature made for something else with the same secret never verifies here. */
const CONTEXT = 'mailer-link.v1.'
/** Longer than any URL a mail client keeps; bounds the work a hostile token can cause. */
export const MAX_TOKEN_LENGTH = 4096

function toWire(t: LinkToken): Wire {
  switch (t.kind) {
    case 'open':
      return ['o', t.emailId]
    case 'click':
      return ['c', t.emailId, t.url]
    case 'unsubscribe':
      return ['u', t.projectId, t.contactId]
  }
}

function fromWire(w: Wire): LinkToken {
  switch (w[0]) {
    case 'o':
      return { kind: 'open', emailId: w[1] }
    case 'c':
      return { kind: 'click', emailId: w[1], url: w[2] }
    case 'u':
      return { kind: 'unsubscribe', projectId: w[1], contactId: w[2] }
  }
}

/** Characters of base64url (unpadded) for `n` bytes. */
const base64urlLength = (n: number): number => Math.ceil((n * 4) / 3)

/** The length of `sign(token)`, without the secret: payload, dot, signature. */
export function signedLength(token: LinkToken): number {
  return (
    base64urlLength(Buffer.byteLength(JSON.stringify(toWire(token)), 'utf8')) + 1 + base64urlLength(SIG_BYTES)
  )
}

/** Signs and verifies link tokens: `base64url(payload).base64url(hmac)`. */
export class TokenSigner {
  private readonly key: Buffer

  constructor(secret: string) {
    if (secret.length < 16) throw new Error('the tracking secret must be at least 16 characters')
    this.key = Buffer.from(secret, 'utf8')
  }

  sign(token: LinkToken): string {
    const payload = Buffer.from(JSON.stringify(toWire(token)), 'utf8').toString('base64url')
    return `${payload}.${this.mac(payload).toString('base64url')}`
  }

  /**
   * The token's content when it is well formed, correctly signed and of `kind` (when given);
   * null otherwise. Never throws, whatever the input.
   */
  verify<K extends LinkKind>(token: string, kind?: K): Extract<LinkToken, { kind: K }> | null {
    if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) return null
    const dot = token.indexOf('.')
    if (dot <= 0 || dot !== token.lastIndexOf('.')) return null
    const payload = token.slice(0, dot)
    const given = Buffer.from(token.slice(dot + 1), 'base64url')
    const expected = this.mac(payload)
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null
    let parsed: unknown
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
    } catch {
      return null
    }
    const wire = Wire.safeParse(parsed)
    if (!wire.success) return null
    const out = fromWire(wire.data)
    if (kind !== undefined && out.kind !== kind) return null
    return out as Extract<LinkToken, { kind: K }>
  }

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.key).update(CONTEXT).update(payload).digest().subarray(0, SIG_BYTES)
  }
}
