import { Attachment, fail, MAX_ATTACHMENTS, MailerError } from '@mailer/contracts'

/** An attachment as stored with the content: base64 without whitespace, its type and decoded size. */
export interface StoredAttachment {
  filename: string
  content: string
  type: string
  disposition: 'attachment' | 'inline'
  contentId: string | null
  size: number
}

/**
 * Base64 without whitespace: quads of the alphabet, the last one possibly of 2 or 3 characters
 * with or without its `=` padding, as `/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|…{3}=|…{2,3})?$/`
 * said. That regex took a backtracking frame per quad and threw a RangeError (a 500) for content
 * of 5.6M characters (a 4 MB file), under the 10 MiB limit; here the regex has one simple loop and
 * the lengths are counted.
 */
function isBase64(s: string): boolean {
  const m = /^[A-Za-z0-9+/]*(={0,2})$/.exec(s)
  if (!m) return false
  const pad = m[1]!.length
  const last = (s.length - pad) % 4
  return pad === 0 ? last !== 1 : last + pad === 4
}

const TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  txt: 'text/plain',
  csv: 'text/csv',
  html: 'text/html',
  ics: 'text/calendar',
  json: 'application/json',
  zip: 'application/zip',
}

/**
 * The MIME type for a filename's extension; application/octet-stream when unknown. Own entries
 * only: `TYPES[ext]` of `a.constructor` or `a.__proto__` was Object or its prototype, stored as no
 * type or `{}` (which the dispatcher cannot send).
 */
export function typeFor(filename: string): string {
  const ext = filename.slice(filename.lastIndexOf('.') + 1).toLowerCase()
  return (filename.includes('.') && Object.hasOwn(TYPES, ext) && TYPES[ext]) || 'application/octet-stream'
}

/** Bytes that base64 text decodes to. */
export function decodedSize(b64: string): number {
  const pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0
  return Math.floor((b64.length * 3) / 4) - pad
}

/** At most 20 attachments, each `{ filename, content (base64), type?, disposition?, contentId? }`. */
export function checkAttachments(raw: unknown): StoredAttachment[] {
  if (raw === undefined) return []
  if (!Array.isArray(raw)) throw fail('invalid_attachment', 'attachments must be a list', 'attachments')
  if (raw.length > MAX_ATTACHMENTS)
    throw fail('invalid_attachment', `At most ${MAX_ATTACHMENTS} attachments`, 'attachments')
  return raw.map((item, i) => {
    const res = Attachment.safeParse(item)
    if (!res.success) {
      const issue = res.error.issues[0]!
      const keys = issue.code === 'unrecognized_keys' ? issue.keys.slice(0, 1) : []
      const path = ['attachments', i, ...issue.path, ...keys].map(String).join('.')
      throw fail(
        'invalid_attachment',
        `${path}: ${keys.length ? `unknown field '${keys[0]}'` : issue.message}`,
        path,
      )
    }
    const a = res.data
    const content = a.content.replace(/\s+/g, '')
    // Whitespace in base64 is skipped, so content of nothing but whitespace is no content, which
    // `""` already is not allowed to be: it used to make an attachment of 0 bytes.
    if (content === '')
      throw fail(
        'invalid_attachment',
        'content must be base64 of at least one byte',
        `attachments.${i}.content`,
      )
    if (!isBase64(content))
      throw fail('invalid_attachment', 'content must be base64', `attachments.${i}.content`)
    return {
      filename: a.filename,
      content,
      type: a.type ?? typeFor(a.filename),
      // An image given a content id is there for the html's `cid:` (as Resend's content_id and
      // Postmark's ContentID make it inline): as an attachment, clients list it as a download.
      disposition: a.disposition ?? (a.contentId ? 'inline' : 'attachment'),
      contentId: a.contentId ?? null,
      size: decodedSize(content),
    }
  })
}

/**
 * html + text + decoded attachments over MAX_MESSAGE_BYTES is 400 `payload_too_large`; param is
 * the part that crossed the limit. `tracking` (only for an email with open or click tracking)
 * says how many bytes the dispatcher's tracking will add to the html: the limit holds for the
 * email as it is sent, so it is asked once the content fits as given.
 */
export function checkSize(
  html: string | null,
  text: string | null,
  attachments: StoredAttachment[],
  maxBytes: number,
  tracking?: () => number,
): void {
  const parts: Array<[string, number]> = [
    ['html', html ? Buffer.byteLength(html, 'utf8') : 0],
    ['text', text ? Buffer.byteLength(text, 'utf8') : 0],
    ...attachments.map((a, i): [string, number] => [`attachments.${i}`, a.size]),
  ]
  refuseOver(parts, maxBytes, '')
  if (html && tracking) {
    parts[0]![1] += tracking()
    refuseOver(parts, maxBytes, ' once its links are tracked (trackClicks, trackOpens)')
  }
}

function refuseOver(parts: Array<[string, number]>, maxBytes: number, why: string): void {
  let total = 0
  for (const [param, bytes] of parts) {
    total += bytes
    if (total > maxBytes) {
      throw new MailerError(
        'payload_too_large',
        `The email's content is larger than ${maxBytes} bytes${why}`,
        {
          param,
          status: 400,
        },
      )
    }
  }
}
