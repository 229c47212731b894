import { createHash } from 'node:crypto'
import { assertStorable, MailerError, SendEmailInput } from '@mailer/contracts'

/**
 * Parses one send input: `missing_body` when absent, else `invalid_body` with `param` set to the
 * dotted path of the first problem (for an unknown field, the field's name).
 */
export function parseSendInput(raw: unknown): SendEmailInput {
  if (raw === undefined || raw === null) throw new MailerError('missing_body', 'A JSON body is required')
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new MailerError('invalid_body', 'The body must be a JSON object')
  // The gateway leaves this to the sends (RouteDef.checksText): one walk of the text, which also
  // serves MailerRpc and each batch item.
  assertStorable(raw)
  const res = SendEmailInput.safeParse(raw)
  if (res.success) return res.data
  const issue = res.error.issues[0]!
  const keys = issue.code === 'unrecognized_keys' ? issue.keys : []
  const path = [...issue.path.map(String), ...keys.slice(0, 1)].join('.')
  // A record's bad key (a tag name) is reported by zod as "Invalid key in record", its own rule inside.
  const inner = issue.code === 'invalid_key' ? issue.issues[0]?.message : undefined
  const message = keys.length ? `Unknown field '${keys[0]}'` : (inner ?? issue.message)
  throw new MailerError('invalid_body', path ? `${path}: ${message}` : message, path ? { param: path } : {})
}

/** JSON with object keys sorted at every level, so equal inputs give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/**
 * The idempotency fingerprint: SHA-256 of the parsed input without `idempotencyKey`, and without
 * `scheduledAt: null` and `data: null`, which a send takes as left out: a repeat that wrote
 * them one way and then the other is the same request (it was 409 idempotency_payload_mismatch).
 */
export function requestHash(input: SendEmailInput): string {
  const { idempotencyKey: _key, ...rest } = input
  const canonical: Record<string, unknown> = rest
  for (const field of ['scheduledAt', 'data'] as const) if (canonical[field] === null) delete canonical[field]
  return createHash('sha256').update(canonicalJson(canonical)).digest('hex')
}
