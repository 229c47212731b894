import { createHmac, timingSafeEqual } from 'node:crypto'
import type { MailerEvent } from './types/webhooks.js'

export const SIGNATURE_HEADER = 'Service-Signature'
export const DEFAULT_TOLERANCE_SECONDS = 300

export type WebhookVerificationFailure =
  | 'missing_signature'
  | 'malformed_signature'
  | 'timestamp_out_of_tolerance'
  | 'signature_mismatch'
  | 'invalid_payload'

/** Thrown by verifyWebhook; `reason` says which check failed. Answer such a request with 400. */
export class WebhookVerificationError extends Error {
  constructor(
    readonly reason: WebhookVerificationFailure,
    message: string,
  ) {
    super(message)
    this.name = 'WebhookVerificationError'
  }
}

/** Anything headers come as: a fetch `Headers`, Node's `req.headers`, or a plain object. */
export type HeaderSource =
  | { get(name: string): string | null }
  | Record<string, string | string[] | undefined>

export interface VerifyOptions {
  /** Largest accepted difference between `t` and now, in seconds. Default 300. */
  toleranceSeconds?: number
  /** The receiver's clock: a Date, or Unix seconds. Default: now. */
  now?: Date | number
}

function headerValue(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(n: string): string | null }).get(name) ?? undefined
  }
  const wanted = name.toLowerCase()
  for (const [k, v] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (k.toLowerCase() === wanted) return Array.isArray(v) ? v.join(',') : v
  }
  return undefined
}

/** `t=<unix seconds>,v1=<hex>[,v1=<hex>...]`: split on `,`, each part on its first `=`. */
export function parseSignatureHeader(header: string): { t: number; v1: string[] } | null {
  let t: number | undefined
  const v1: string[] = []
  for (const part of header.split(',')) {
    const eq = part.indexOf('=')
    if (eq < 0) continue
    const key = part.slice(0, eq).trim()
    const value = part.slice(eq + 1).trim()
    if (key === 't' && /^\d+$/.test(value)) t = Number(value)
    else if (key === 'v1' && value !== '') v1.push(value)
  }
  return t === undefined || v1.length === 0 ? null : { t, v1 }
}

/** Lowercase hex HMAC-SHA256 of `<t>.<raw body>`, keyed by the whole secret (with `whsec_`). */
export function signWebhookPayload(secret: string, timestamp: number, rawBody: string | Uint8Array): string {
  const hmac = createHmac('sha256', Buffer.from(secret, 'utf8'))
  hmac.update(`${timestamp}.`, 'utf8')
  hmac.update(typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody)
  return hmac.digest('hex')
}

/**
 * Verifies a webhook delivery exactly as interface.md part 6 says, and returns its event.
 * Pass the raw body bytes as received (not re-serialised JSON). Throws
 * WebhookVerificationError when the body is not a string or bytes (`invalid_payload`: a body a
 * JSON middleware already parsed), when the signature header is missing or malformed, when `t` is more
 * than `toleranceSeconds` away from now, or when no `v1` matches (compared in constant time).
 */
export function verifyWebhook(
  secret: string,
  headers: HeaderSource,
  rawBody: string | Uint8Array,
  opts: VerifyOptions = {},
): MailerEvent {
  if (typeof secret !== 'string' || secret === '') throw new TypeError('the webhook secret is required')
  // A body already parsed by a JSON middleware (express.json()) is the common mistake; the
  // signature covers the bytes as sent, which cannot be rebuilt from the object.
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    throw new WebhookVerificationError(
      'invalid_payload',
      `verifyWebhook needs the raw request body (a string or Buffer), got ${rawBody === null ? 'null' : typeof rawBody}: ` +
        "with Express, use express.raw({ type: 'application/json' }) on the webhook route instead of express.json()",
    )
  }
  const header = headerValue(headers, SIGNATURE_HEADER)
  if (!header) throw new WebhookVerificationError('missing_signature', `No ${SIGNATURE_HEADER} header`)
  const sig = parseSignatureHeader(header)
  if (!sig)
    throw new WebhookVerificationError(
      'malformed_signature',
      `${SIGNATURE_HEADER} needs t=<seconds> and v1=<hex>`,
    )

  const tolerance = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  const now =
    opts.now === undefined
      ? Date.now() / 1000
      : typeof opts.now === 'number'
        ? opts.now
        : opts.now.getTime() / 1000
  // Bad options must not switch the check off (NaN compares false with everything).
  if (!Number.isFinite(tolerance) || tolerance < 0)
    throw new TypeError('toleranceSeconds must be a finite number of seconds, 0 or more')
  if (!Number.isFinite(now)) throw new TypeError('now must be a valid date or a number of seconds')
  if (!(Math.abs(now - sig.t) <= tolerance)) {
    throw new WebhookVerificationError(
      'timestamp_out_of_tolerance',
      `Signature time is more than ${tolerance}s from now`,
    )
  }

  const expected = Buffer.from(signWebhookPayload(secret, sig.t, rawBody), 'utf8')
  // Check every candidate without stopping early, each in constant time.
  let matched = false
  for (const candidate of sig.v1) {
    const given = Buffer.from(candidate, 'utf8')
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true
  }
  if (!matched)
    throw new WebhookVerificationError('signature_mismatch', 'No v1 signature matches this body and secret')

  try {
    return JSON.parse(
      typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8'),
    ) as MailerEvent
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'The signed body is not JSON')
  }
}
