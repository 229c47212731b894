import type { StoredAttachment } from './attachments.js'

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
 * the original. No schedule and no idempotency key: a resend goes out now, every time.
 */
export function resendInput(e: ResendSource, c: ResendContent): Record<string, unknown> {
  const attachments = ((c.attachments ?? []) as StoredAttachment[]).map((a) => ({
    filename: a.filename,
    content: a.content,
    type: a.type,
    disposition: a.disposition,
    ...(a.contentId ? { contentId: a.contentId } : {}),
  }))
  const headers = (c.headers ?? {}) as Record<string, string>
  return {
    from: e.from,
    to: e.to,
    ...(e.cc.length ? { cc: e.cc } : {}),
    ...(e.bcc.length ? { bcc: e.bcc } : {}),
    ...(e.replyTo.length ? { replyTo: e.replyTo } : {}),
    subject: e.subject,
    ...(c.html !== null ? { html: c.html } : {}),
    ...(c.text !== null ? { text: c.text } : {}),
    ...(Object.keys(headers).length ? { headers } : {}),
    ...(attachments.length ? { attachments } : {}),
    tags: { ...((e.tags ?? {}) as Record<string, string>), resent_from: e.id },
    trackOpens: e.trackOpens,
    trackClicks: e.trackClicks,
  }
}
