import { serveRoutes } from '@mailer/bus'
import {
  BatchBody,
  BatchQuery,
  type Caller,
  fail,
  MAX_BATCH,
  parseQuery,
  SendQuery,
  unstorablePart,
} from '@mailer/contracts'
import type { EmailContext } from '../app.js'
import { type Accept, makeAcceptor, type Outcome } from './accept.js'

const KEY_MAX = 256

/**
 * `http` for a key, `admin` for the admin mirror, `rpc` for in-cluster calls; batches are `batch`;
 * the broadcast service's sends are `broadcast` whichever caller they act as.
 */
export function sourceOf(caller: Caller, batch: boolean): string {
  if (caller.source === 'broadcast') return 'broadcast'
  if (caller.via === 'admin') return 'admin'
  if (batch) return 'batch'
  return caller.via === 'rpc' ? 'rpc' : 'http'
}

/** The `Idempotency-Key` header, 1-256 characters (checked like the body field it stands for). */
function headerKey(headers: Record<string, string>): string | undefined {
  const key = headers['idempotency-key']
  if (key === undefined) return undefined
  if (key.length === 0 || key.length > KEY_MAX) {
    throw fail('invalid_body', `Idempotency-Key must be 1-${KEY_MAX} characters`, 'idempotencyKey')
  }
  // HTTP cannot carry these, AdminRpc's `headers` can; PostgreSQL would refuse the key with a 500.
  const problem = unstorablePart(key)
  if (problem) throw fail('invalid_body', `Idempotency-Key: ${problem.problem}`, 'idempotencyKey')
  return key
}

const itemBody = (o: Outcome) => {
  if ('result' in o) return o.result
  const { type, code, message, param } = o.error
  return { error: param === undefined ? { type, code, message } : { type, code, message, param } }
}

/** POST /v1/emails and POST /v1/emails/batch. */
export function serveSend(ctx: EmailContext, accept: Accept = makeAcceptor(ctx)): void {
  serveRoutes(ctx.rt.bus, 'email', {
    'api.email.emails.send': async ({ caller, body, headers, query }) => {
      // Read before the body, as the batch does: a bad `dryRun` must never fall back to a real send.
      const { dryRun } = parseQuery(SendQuery, query)
      const [outcome] = await accept(caller, [{ raw: body, overrideKey: headerKey(headers) }], {
        source: sourceOf(caller, false),
        dryRun: dryRun ?? false,
      })
      if (!outcome) throw new Error('accept returned no outcome')
      if ('error' in outcome) throw outcome.error
      return outcome.result
    },

    'api.email.emails.send-batch': async ({ caller, body, headers, query }) => {
      const { dryRun } = parseQuery(BatchQuery, query)
      const key = headerKey(headers)
      if (body === undefined || body === null)
        throw fail('missing_body', 'A JSON array of 1-100 emails is required')
      if (!Array.isArray(body))
        throw fail('invalid_body', `The body must be a JSON array of 1-${MAX_BATCH} emails`)
      const res = BatchBody.safeParse(body)
      if (!res.success) throw fail('invalid_body', res.error.issues[0]?.message ?? 'Invalid batch')
      const items = res.data.map((raw, i) => ({
        raw,
        fallbackKey: key === undefined ? undefined : `${key}:${i}`,
      }))
      const outcomes = await accept(caller, items, {
        source: sourceOf(caller, true),
        dryRun: dryRun ?? false,
      })
      return { data: outcomes.map(itemBody) }
    },
  })
}
