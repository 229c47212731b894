import { broadcastEmailKey, fail, MailerError } from '@mailer/contracts'
import type { CompiledTemplate } from '@mailer/templating'

/** What a broadcast email is made from. */
export interface BroadcastContent {
  id: string
  from: string
  subject: string
  html: string
  text: string | null
}

export interface ContactForSend {
  id: string
  email: string
  firstName: string | null
  lastName: string | null
  data: unknown
}

/** The send input the email service receives for one contact (contract.md part 3). */
export interface BroadcastSendInput {
  from: string
  to: string
  subject: string
  html: string
  text?: string
  headers: Record<string, string>
  tags: { broadcast_id: string }
  idempotencyKey: string
}

/**
 * A contact's template variables: its own `data`, then the reserved names, which always win
 * (a contact's data cannot fake another address or unsubscribe link).
 */
export function contactVariables(c: ContactForSend, unsubscribeUrl: string): Record<string, unknown> {
  const data = c.data !== null && typeof c.data === 'object' && !Array.isArray(c.data) ? c.data : {}
  return {
    ...(data as Record<string, unknown>),
    email: c.email,
    first_name: c.firstName ?? '',
    last_name: c.lastName ?? '',
    unsubscribe_url: unsubscribeUrl,
  }
}

/**
 * One contact's email: rendered content, RFC 8058 one-click unsubscribe headers, the
 * `broadcast_id` tag and the idempotency key that makes a resend after a crash a no-op.
 * Throws the renderer's 400 `invalid_template_data` when the contact's data cannot be rendered,
 * or renders an empty subject, or empty html and text; and 400 `payload_too_large` when its html
 * and text together pass `maxBytes` (MAX_MESSAGE_BYTES, counted as the email service counts it),
 * which the email service would refuse anyway.
 */
export function personalize(
  b: BroadcastContent,
  template: CompiledTemplate,
  c: ContactForSend,
  unsubscribeUrl: string,
  maxBytes: number,
): BroadcastSendInput {
  // Stops rendering once a part passes the limit: a contact's `#each` could otherwise build the
  // renderer's own maximum (32 Mi characters) and derive text from it before being skipped.
  const out = template.render(
    contactVariables(c, unsubscribeUrl),
    Number.isFinite(maxBytes) ? { maxBytes } : undefined,
  )
  if (!out.subject)
    throw fail('invalid_template_data', 'The subject renders empty for this contact', 'subject')
  // A send needs a body (html and text cannot both be empty), as a contact needs a subject.
  if (!out.html && !out.text)
    throw fail('invalid_template_data', 'The html and text render empty for this contact', 'html')
  const bytes = contentBytes(out.html) + contentBytes(out.text)
  if (bytes > maxBytes) {
    throw new MailerError(
      'payload_too_large',
      `The email renders to ${bytes} bytes for this contact, over the ${maxBytes} an email may have`,
      { param: 'html', status: 400 },
    )
  }
  const input: BroadcastSendInput = {
    from: b.from,
    to: c.email,
    subject: out.subject,
    html: out.html ?? '',
    headers: {
      'List-Unsubscribe': `<${unsubscribeUrl}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
    tags: { broadcast_id: b.id },
    idempotencyKey: broadcastEmailKey(b.id, c.id),
  }
  if (out.text) input.text = out.text
  return input
}

const contentBytes = (s: string | null): number => (s ? Buffer.byteLength(s, 'utf8') : 0)
