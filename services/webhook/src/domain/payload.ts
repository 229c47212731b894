import { type EventPayload, newId } from '@mailer/contracts'

const TOP = ['id', 'type', 'createdAt', 'data'] as const
const DATA_FIRST = ['emailId', 'recipient', 'from', 'subject', 'tags'] as const

function ordered(obj: Record<string, unknown>, first: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const k of first) if (k in obj) out[k] = obj[k]
  for (const k of Object.keys(obj)) if (!(k in out)) out[k] = obj[k]
  return out
}

/**
 * The event with its fields in the documented order (`id, type, createdAt, data`; `data` starting
 * with `emailId, recipient, from, subject, tags`). PostgreSQL's jsonb stores keys in its own order,
 * so this keeps webhook bodies and the event log readable and identical. Values are untouched.
 */
export function orderPayload(payload: unknown): Record<string, unknown> {
  const p = (payload ?? {}) as Record<string, unknown>
  const out = ordered(p, TOP)
  if (out.data && typeof out.data === 'object' && !Array.isArray(out.data))
    out.data = ordered(out.data as Record<string, unknown>, DATA_FIRST)
  return out
}

/** The raw body a receiver gets (and whose bytes are signed). */
export const deliveryBody = (payload: unknown): string => JSON.stringify(orderPayload(payload))

/** `POST /v1/webhooks/:id/test`: a synthetic `email.delivered` with `data.test: true` and a normal evt_ id. */
export function testEvent(now = new Date()): EventPayload {
  return {
    id: newId('event'),
    type: 'email.delivered',
    createdAt: now.toISOString(),
    data: {
      emailId: newId('email'),
      recipient: 'delivered@example.com',
      from: 'Mailer <test@example.com>',
      subject: 'Test webhook event',
      tags: {},
      delivery: { status: 'delivered', provider: 'test', deliveryTimeMs: 0 },
      terminal: true,
      test: true,
    },
  }
}
