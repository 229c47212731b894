const PREVIEW_CHARS = 200

/** The first 200 characters of the text part, or of the html with tags and scripts removed. */
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
  return source.replace(/\s+/g, ' ').trim().slice(0, PREVIEW_CHARS)
}
