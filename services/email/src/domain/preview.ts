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
    withoutTags(withoutHidden(html ?? ''))
      .replace(/&nbsp;/g, ' ')
      .replace(/&amp;/g, '&')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
  return truncate(source.replace(/\s+/g, ' ').trim(), PREVIEW_CHARS)
}

const HIDDEN_OPEN = /<(script|style|head)/gi
const HIDDEN_CLOSE: Readonly<Record<string, RegExp>> = {
  script: /<\/script>/gi,
  style: /<\/style>/gi,
  head: /<\/head>/gi,
}

/**
 * The html with each `<script`, `<style` or `<head` up to the first `</script>` (`</style>`,
 * `</head>`, any case) after it replaced by a space; one with no such closing tag after it is
 * left. What `/<(script|style|head)[\s\S]*?<\/\1>/gi` did, but that regex scanned to the end
 * from every opening with no closing tag after it (quadratic in their number, and the send runs
 * this on any html of up to 10 MiB). Here the search for each closing tag only moves forward: its
 * last answer is kept, and still holds for any later opening it does not lie before (-1: none
 * after, so none after any later opening either).
 */
function withoutHidden(html: string): string {
  const nextClose = new Map<string, number>()
  const open = HIDDEN_OPEN
  open.lastIndex = 0
  let out = ''
  let copied = 0
  for (let m = open.exec(html); m; m = open.exec(html)) {
    const name = m[1]!.toLowerCase()
    let at = nextClose.get(name)
    if (at === undefined || (at !== -1 && at < open.lastIndex)) {
      const close = HIDDEN_CLOSE[name]!
      close.lastIndex = open.lastIndex
      at = close.exec(html)?.index ?? -1
      nextClose.set(name, at)
    }
    // No closing tag after it: not hidden; the search goes on past the tag's name.
    if (at === -1) continue
    out += `${html.slice(copied, m.index)} `
    copied = at + name.length + 3 // past `</name>`
    open.lastIndex = copied
  }
  return out + html.slice(copied)
}

/**
 * Every `<…>` replaced by a space, as `/<[^>]*>/g` does, but only up to the last `>`: past it no
 * `<` can start a tag, and the regex scanned to the end from each of them (`<` × 100,000 took 9 s).
 * Before it, every `<` has a `>` after it, so each match ends at the first `>` it reaches.
 */
function withoutTags(s: string): string {
  const end = s.lastIndexOf('>') + 1
  return s.slice(0, end).replace(/<[^>]*>/g, ' ') + s.slice(end)
}
