import { MAX_TAGS, withoutControls } from '@mailer/contracts'
import type { StoredAttachment } from './attachments.js'
import { checkHeaders } from './headers.js'

/**
 * The stored headers a send may still give: an email accepted before a header rule existed (a
 * `Sender`, a control character, a name given twice in two cases) is resent without that header
 * (the later spelling) rather than refused.
 */
function sendableHeaders(stored: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {}
  const names = new Set<string>()
  for (const [name, value] of Object.entries(stored)) {
    if (names.has(name.toLowerCase())) continue
    try {
      Object.assign(out, checkHeaders({ [name]: value }))
      names.add(name.toLowerCase())
    } catch {
      // Refused by today's rules: left out.
    }
  }
  return out
}

export interface ResendSource {
  id: string
  from: string
  to: string[]
  cc: string[]
  bcc: string[]
  replyTo: string[]
  subject: string
  tags: unknown
  trackOpens: boolean
  trackClicks: boolean
}

export interface ResendContent {
  html: string | null
  text: string | null
  headers: unknown
  attachments: unknown
}

/**
 * The send input that sends a stored email again: its envelope, its rendered content (a template
 * is not rendered again), headers, attachments and tracking, with the tag `resent_from` naming
 * the original. No schedule and no idempotency key: a resend goes out now, every time. What the
 * send input's rules of today refuse in an email accepted before them (a header the service now
 * owns, a control character in a subject or display name, an empty attachment) is left out, so that every stored email
 * can be resent.
 */
export function resendInput(e: ResendSource, c: ResendContent): Record<string, unknown> {
  // An attachment of 0 bytes (content of nothing but whitespace, accepted before that was refused)
  // is left out: there is nothing in it to send again.
  const stored = ((c.attachments ?? []) as StoredAttachment[]).filter((a) => a.content !== '')
  const attachments = stored.map((a) => ({
    filename: a.filename,
    content: a.content,
    type: a.type,
    disposition: a.disposition,
    ...(a.contentId ? { contentId: a.contentId } : {}),
  }))
  const headers = sendableHeaders((c.headers ?? {}) as Record<string, string>)
  // `resent_from` names the original, unless the email already holds as many tags as a send may.
  const { resent_from: _previous, ...tags } = (e.tags ?? {}) as Record<string, string>
  return {
    from: withoutControls(e.from),
    to: e.to,
    ...(e.cc.length ? { cc: e.cc } : {}),
    ...(e.bcc.length ? { bcc: e.bcc } : {}),
    ...(e.replyTo.length ? { replyTo: e.replyTo.map(withoutControls) } : {}),
    subject: withoutControls(e.subject),
    ...(c.html !== null ? { html: c.html } : {}),
    ...(c.text !== null ? { text: c.text } : {}),
    ...(Object.keys(headers).length ? { headers } : {}),
    ...(attachments.length ? { attachments } : {}),
    tags: Object.keys(tags).length < MAX_TAGS ? { ...tags, resent_from: e.id } : tags,
    trackOpens: e.trackOpens,
    trackClicks: e.trackClicks,
  }
}
