import { truncate } from '@mailer/contracts'

const PREVIEW_CHARS = 200

/**
 * The first 200 characters (UTF-16 code units) of the text part, or of the html with tags and
 * scripts removed; 199 when the 200th is the first half of an emoji, which is dropped whole
 * (`truncate`): a lone half made the email's row unstorable as jsonb, and the send a 500.
 */
export function textPreview(text: string | null, html: string | null): string {
  const source =
    text ??
    (html ?? '')
      .replace(/<(script|style|head)[\s\S]*?<\/\1>/gi, ' ')
      .replace(/<[^>]*>/g, ' ')
      .replace(/&nbsp;/g, ' ')
      .replace(/&amp;/g, '&')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
  return truncate(source.replace(/\s+/g, ' ').trim(), PREVIEW_CHARS)
}
