import { asciiDomain, parseMailbox } from '@mailer/contracts'
import type Mail from 'nodemailer/lib/mailer'
import mimeFuncs from 'nodemailer/lib/mime-funcs/index.js'
import { z } from 'zod'
import type { ClaimedEmail, EmailContent } from './claimed-email.js'
import { type TrackingLinks, transformHtml } from './transform-html.js'

/** The email cannot be turned into a message (bad stored content): retrying will not help. */
export class RenderError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'RenderError'
  }
}

const StoredHeaders = z.record(z.string(), z.string())
// As the email service stores them (checked at acceptance); extra fields such as `size` are ignored.
const StoredAttachments = z.array(
  z.object({
    filename: z.string().min(1),
    content: z.string(),
    type: z.string().nullish(),
    disposition: z.enum(['attachment', 'inline']).nullish(),
    contentId: z.string().nullish(),
  }),
)

/** The bare address of `From` (`Name <a@b.c>` → `a@b.c`). */
export function senderAddress(from: string): string {
  return mailbox(from).address
}

/**
 * A stored `Name <a@b.c>` as the one mailbox the email service checked. Handing nodemailer the
 * text instead lets it parse the name again by its own rules, where `,` and `;` separate
 * mailboxes: `ceo@bank.test, Bob <a@b.c>` became a From with a second, unchecked address. As an
 * object, the name is quoted (or encoded) whatever it holds.
 */
function mailbox(value: string): Mail.Address {
  const parsed = parseMailbox(value)
  if (!parsed) throw new RenderError(`unusable address ${JSON.stringify(value)}`)
  return { name: parsed.name ?? '', address: parsed.address }
}

/** The domain the email is sent from: Message-ID's right-hand side and the DKIM signing domain. */
export function senderDomain(from: string): string {
  const address = senderAddress(from)
  return asciiDomain(address.slice(address.lastIndexOf('@') + 1))
}

/**
 * The subject as the renderer should write it. A header is folded at its spaces, each piece on a
 * line after one space, so a word of 998 characters (a subject may be that long) made a line of
 * 999, over RFC 5322's 998 (2.1.1), which relays may refuse or rewrap, breaking the DKIM
 * signature. Such a subject goes as RFC 2047 encoded words instead: short, folded between
 * them, and read back as the same text. Non-ASCII words are encoded by the renderer anyway.
 */
export function subjectField(subject: string): string {
  if (!/[!-~]{998}/.test(subject)) return subject
  return mimeFuncs.encodeWord(subject, 'Q', 52)
}

/**
 * A custom header's value as the renderer should write it: like a long subject, a value holding
 * an unbroken ASCII run that no folding fits in a 998-octet line (the email service accepts one
 * up to the contract's 2,048 bytes in `X-` fields) goes as encoded words.
 */
export function customHeaderFields(headers: Record<string, string>): Record<string, string> {
  let out: Record<string, string> | null = null
  for (const name in headers) {
    const value = headers[name]!
    if (!/[!-~]{991}/.test(value)) continue
    out ??= { ...headers }
    out[name] = mimeFuncs.encodeWord(value, 'Q', 52)
  }
  return out ?? headers
}

export const messageIdFor = (email: Pick<ClaimedEmail, 'id' | 'from'>): string =>
  `<${email.id}@${senderDomain(email.from)}>`

/**
 * The nodemailer message for one attempt (signed afterwards: domain/dkim-sign.ts). Headers list
 * every recipient as sent to the API; the SMTP envelope holds only `envelopeTo` (the recipients
 * this attempt is for), so a retry never reaches someone twice. Bcc recipients are in the envelope only, never in a header: the message
 * is rendered by a transport that would otherwise keep the Bcc header in the raw bytes.
 */
export function buildMessage(
  email: ClaimedEmail,
  content: EmailContent,
  envelopeTo: string[],
  /** Open/click tracking links; null leaves the HTML untouched. */
  tracking: TrackingLinks | null = null,
): Mail.Options {
  const headers = StoredHeaders.safeParse(content.headers ?? {})
  if (!headers.success) throw new RenderError('stored headers are not a name → value map')
  const attachments = StoredAttachments.safeParse(content.attachments ?? [])
  if (!attachments.success) throw new RenderError('stored attachments do not match the attachment schema')

  const message: Mail.Options = {
    from: mailbox(email.from),
    to: email.to,
    subject: subjectField(email.subject),
    messageId: messageIdFor(email),
    headers: customHeaderFields(headers.data),
    envelope: { from: senderAddress(email.from), to: envelopeTo },
    // Our own Message-ID and Date only; nodemailer adds no X-Mailer unless asked.
    xMailer: false,
  }
  if (email.cc.length) message.cc = email.cc
  if (email.replyTo.length) message.replyTo = email.replyTo.map(mailbox)
  if (content.html !== null) message.html = transformHtml(email, content.html, tracking)
  if (content.text !== null) message.text = content.text
  if (attachments.data.length) {
    message.attachments = attachments.data.map((a) => ({
      filename: a.filename,
      content: a.content,
      encoding: 'base64',
      ...(a.type ? { contentType: a.type } : {}),
      ...(a.disposition ? { contentDisposition: a.disposition } : {}),
      ...(a.contentId ? { cid: a.contentId } : {}),
    }))
  }
  return message
}
