/**
 * A plain-text alternative for an HTML email: what a person would read, not a faithful
 * conversion. Invisible parts (head, style, script, comments) go; block elements and <br>
 * become line breaks; list items get "- "; a link keeps its URL in brackets when its text is
 * not already the URL; images keep their alt text; entities are decoded; whitespace inside
 * a line is collapsed and at most one blank line separates paragraphs.
 */
export function htmlToText(html: string): string {
  let s = html
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<(head|style|script|title|noscript|template)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, '')
    .replace(/<!doctype[^>]*>/gi, '')

  s = s.replace(/<a\b([^>]*)>([\s\S]*?)<\/a\s*>/gi, (_m, attrs: string, inner: string) => {
    const text = stripTags(inner).replace(/\s+/g, ' ').trim()
    const href = attr(attrs, 'href')
    if (!href || !/^(https?:|mailto:)/i.test(href)) return text
    const url = decodeEntities(href)
    const shown = url.replace(/^mailto:/i, '')
    if (!text) return url
    return decodeEntities(text) === shown || decodeEntities(text) === url ? text : `${text} (${url})`
  })
  s = s.replace(/<img\b([^>]*)>/gi, (_m, attrs: string) => attr(attrs, 'alt') ?? '')
  s = s.replace(/<br\s*\/?>/gi, '\n')
  s = s.replace(/<li\b[^>]*>/gi, '\n- ')
  s = s.replace(/<hr\b[^>]*>/gi, '\n\n---\n\n')
  s = s.replace(/<\/?(td|th)\b[^>]*>/gi, ' ')
  s = s.replace(
    /<\/?(p|div|h[1-6]|ul|ol|table|tr|blockquote|section|article|header|footer|pre|address|center)\b[^>]*>/gi,
    '\n\n',
  )
  s = decodeEntities(stripTags(s))

  const lines = s.split('\n').map((l) => l.replace(/[ \t\f\v\u00a0]+/g, ' ').trim())
  const out: string[] = []
  for (const line of lines) {
    if (line === '' && (out.length === 0 || out[out.length - 1] === '')) continue
    out.push(line)
  }
  while (out.length > 0 && out[out.length - 1] === '') out.pop()
  return out.join('\n')
}

function stripTags(s: string): string {
  return s.replace(/<\/?[a-zA-Z][^>]*>/g, '')
}

function attr(attrs: string, name: string): string | null {
  const m = new RegExp(`\\b${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(attrs)
  return m ? (m[1] ?? m[2] ?? m[3] ?? '') : null
}

const NAMED: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  copy: '©',
  reg: '®',
  trade: '™',
  hellip: '…',
  mdash: '—',
  ndash: '–',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  bull: '•',
  middot: '·',
  euro: '€',
  pound: '£',
}

/** Decodes the entities Handlebars escaping produces and the common named ones. */
export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === '#') {
      const code =
        e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number.parseInt(e.slice(1), 10)
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : m
    }
    return NAMED[e.toLowerCase()] ?? m
  })
}
