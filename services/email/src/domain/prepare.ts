import { fail, MailerError, type SendEmailInput } from '@mailer/contracts'
import { htmlToText, overBytes, RenderTooLarge } from '@mailer/templating'
import { checkAttachments, checkSize, type StoredAttachment } from './attachments.js'
import { checkHeaders } from './headers.js'
import { parseSendInput, requestHash } from './input.js'
import { collectRecipients, type ProjectDomains, type Recipient, resolveSender } from './recipients.js'
import { checkSchedule } from './schedule.js'
import type { TemplateRenderer } from './template.js'
import { trackingOf } from './tracked-size.js'

/** What the checks of one send need to know about the call. */
export interface SendContext {
  projectId: string
  defaultFrom: string | null
  domains: ProjectDomains
  live: boolean
  now: Date
  maxMessageBytes: number
  /** PUBLIC_URL, the base of the tracking links the dispatcher writes into tracked emails. */
  publicUrl: string
  templates: TemplateRenderer
}

/** A send input past parse → sender → recipients. */
export interface CheckedSend {
  input: SendEmailInput
  from: string
  recipients: Recipient[]
}

/** A send input past every check before idempotency and limits: ready to store. */
export interface PreparedSend extends CheckedSend {
  subject: string
  html: string | null
  text: string | null
  headers: Record<string, string>
  attachments: StoredAttachment[]
  scheduledAt: Date | null
  template: string | null
  templateVersion: number | null
  /** The idempotency fingerprint, computed when first read: only keyed sends need it. */
  readonly hash: string
}

/** First checks, in the contract's order: parse → sender → recipients. Throws a MailerError. */
export function checkSend(raw: unknown, ctx: SendContext): CheckedSend {
  const input = parseSendInput(raw)
  const from = resolveSender(input.from, ctx.defaultFrom, ctx.domains, ctx.live)
  const recipients = collectRecipients(input)
  return { input, from, recipients }
}

/**
 * The checks after suppression (which comes between recipients and these, for live sends only;
 * the accept path checks it before or while it writes), in order: headers → template → subject →
 * attachments → size → schedule. Throws a MailerError.
 */
export async function prepareSend(c: CheckedSend, ctx: SendContext): Promise<PreparedSend> {
  const { input } = c
  const headers = checkHeaders(input.headers)

  let subject = input.subject ?? null
  let html = input.html ?? null
  let text = input.text ?? null
  let templateVersion: number | null = null
  // Content found over the limit while rendering (or before deriving a text): answered at the
  // size step, after the attachments, as contract.md orders the checks; the render stops there,
  // so the email's content is never built past the limit.
  let tooLarge: MailerError | null = null
  if (input.template !== undefined) {
    const data = input.data ?? {}
    if (data === null || typeof data !== 'object' || Array.isArray(data)) {
      throw fail('invalid_template_data', 'data must be an object of template variables', 'data')
    }
    try {
      const rendered = await ctx.templates.render(
        ctx.projectId,
        input.template,
        data as Record<string, unknown>,
        {
          maxBytes: ctx.maxMessageBytes,
        },
      )
      subject ??= rendered.subject
      // A text the template derives from its own html would describe a body this email does not
      // carry when the send gives its own html: derive it from that html instead.
      if (text === null && html !== null && !rendered.ownText) {
        tooLarge = htmlOverLimit(html, ctx.maxMessageBytes)
        if (!tooLarge) text = htmlToText(html)
      } else text ??= rendered.text
      html ??= rendered.html
      templateVersion = rendered.version
    } catch (e) {
      // A subject past the limit is the subject step's answer, which follows at once.
      if (!(e instanceof RenderTooLarge) || e.field === 'subject') throw e
      subject ??= e.subject
      tooLarge = e
    }
    // As without a template, html and text cannot both be empty: data can render them so.
    if (!tooLarge && !html && !text)
      throw fail('invalid_template_data', 'The template renders empty html and text with this data', 'data')
  }
  if (!subject) throw fail('invalid_body', 'subject is required (1-998 characters)', 'subject')

  const attachments = checkAttachments(input.attachments)
  if (tooLarge) throw tooLarge
  checkSize(
    html,
    text,
    attachments,
    ctx.maxMessageBytes,
    html === null ? undefined : trackingOf(html, input, ctx.publicUrl),
  )
  const scheduledAt = checkSchedule(input.scheduledAt, ctx.now)
  // Hashing the canonical input was ~3 % of the email service's CPU in a batch without keys.
  let hash: string | undefined
  // Named fields, not `{ ...c, subject, … }`: V8 (Node 20) builds an object spread followed by more
  // properties on a slow path, about 2 µs per property after it: 20 µs per email here, a fifth of
  // the email service's time in a batch (bench/README.md).
  return {
    input: c.input,
    from: c.from,
    recipients: c.recipients,
    subject,
    html,
    text,
    headers,
    attachments,
    scheduledAt,
    template: input.template ?? null,
    templateVersion,
    get hash() {
      hash ??= requestHash(input)
      return hash
    },
  }
}

/**
 * payload_too_large for a send's own html over the limit (overBytes), else null: a text is
 * derived from the html only once it fits.
 */
function htmlOverLimit(html: string, maxBytes: number): MailerError | null {
  if (!overBytes(html, maxBytes)) return null
  return new MailerError('payload_too_large', `The email's content is larger than ${maxBytes} bytes`, {
    param: 'html',
    status: 400,
  })
}
