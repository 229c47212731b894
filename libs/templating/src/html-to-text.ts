/**
 * A plain-text alternative for an HTML email: what a person would read, not a faithful
 * conversion. Invisible parts (head, style, script, comments) go; block elements and <br>
 * become line breaks; list items get "- "; a link keeps its URL in brackets when its text is
 * not already the URL; images keep their alt text; entities are decoded; whitespace inside
 * a line is collapsed and at most one blank line separates paragraphs.
 *
 * One pass over the html, each search moving forward (the html can be rendered data several MB
 * long): regexes of the `<a …>…</a>` kind rescan to the end from every unclosed tag, which made
 * 400 KB of `<img alt="` take 12 s and 10 MB hours.
 */
export function htmlToText(html: string): string {
  const lines = decodeEntities(walk(html))
    .split('\n')
    .map((l) => l.replace(/[ \t\f\v\u00a0]+/g, ' ').trim())
  const kept: string[] = []
  for (const line of lines) {
    if (line === '' && (kept.length === 0 || kept[kept.length - 1] === '')) continue
    kept.push(line)
  }
  while (kept.length > 0 && kept[kept.length - 1] === '') kept.pop()
  return kept.join('\n')
}

/** The text of `html` with its line breaks, entities still encoded. */
function walk(html: string): string {
  const closes = new Closes(html)
  let out = ''
  let i = 0
  while (i < html.length) {
    const lt = html.indexOf('<', i)
    if (lt === -1) {
      out += html.slice(i)
      break
    }
    out += html.slice(i, lt)
    i = lt + 1
    const next = html.charCodeAt(lt + 1)
    if (html.startsWith('<!--', lt)) {
      // An unclosed comment hides the rest, as in a browser.
      const end = html.indexOf('-->', lt + 4)
      i = end === -1 ? html.length : end + 3
      continue
    }
    const isTag = isLetter(next) || (next === 0x2f && isLetter(html.charCodeAt(lt + 2)))
    if (!isTag && next !== 0x21 && next !== 0x3f) {
      out += '<'
      continue
    }
    const gt = closes.gt(lt)
    if (gt === -1) {
      // No `>` anywhere after: nothing from here on is a tag.
      out += html.slice(lt)
      break
    }
    i = gt + 1
    // `<!doctype …>`, `<?xml …?>`: declarations, not text.
    if (!isTag) continue
    const closing = next === 0x2f
    const inside = html.slice(lt + (closing ? 2 : 1), gt)
    const name = /^[a-zA-Z][a-zA-Z0-9-]*/.exec(inside)![0].toLowerCase()
    if (!closing && HIDDEN.has(name)) {
      const end = closes.element(name, i)
      if (end) i = end.after
      continue
    }
    if (!closing && name === 'a') {
      const end = closes.element('a', i)
      if (end) {
        out += link(inside, html.slice(i, end.start))
        i = end.after
      }
      continue
    }
    if (name === 'img' && !closing) out += attr(inside, 'alt') ?? ''
    else if (name === 'br') out += '\n'
    else if (name === 'li' && !closing) out += '\n- '
    else if (name === 'hr' && !closing) out += '\n\n---\n\n'
    else if (name === 'td' || name === 'th') out += ' '
    else if (BLOCKS.has(name)) out += '\n\n'
  }
  return out
}

const HIDDEN = new Set(['head', 'style', 'script', 'title', 'noscript', 'template'])
const BLOCKS = new Set([
  ...['p', 'div', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'table', 'tr', 'blockquote'],
  ...['section', 'article', 'header', 'footer', 'pre', 'address', 'center'],
])

const isLetter = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)

/**
 * Where tags and elements end, found with forward searches that remember their misses: once no
 * `>` (or no `</name>`) follows a position, none follows any later one, so no search repeats.
 */
class Closes {
  private readonly lower: string
  private noGtFrom = Number.POSITIVE_INFINITY
  private readonly noCloseFrom = new Map<string, number>()

  constructor(private readonly html: string) {
    // As long as the html, so its indexes are the html's: `toLowerCase()` makes `İ` two code units
    // (`i` and a combining dot), which put every search after one off by one (a <style> after it
    // was read as text, a link lost its URL). Tag names are ASCII: dotless `ı` stands in for it.
    this.lower = html.replaceAll('\u0130', '\u0131').toLowerCase()
  }

  /** The first `>` at or after `from`, or -1. */
  gt(from: number): number {
    if (from >= this.noGtFrom) return -1
    const at = this.html.indexOf('>', from)
    if (at === -1) this.noGtFrom = from
    return at
  }

  /** The first `</name>` (`</name  >` too) at or after `from`: where it starts and what follows it. */
  element(name: string, from: number): { start: number; after: number } | null {
    if (from >= (this.noCloseFrom.get(name) ?? Number.POSITIVE_INFINITY)) return null
    const open = `</${name}`
    for (let at = this.lower.indexOf(open, from); at !== -1; at = this.lower.indexOf(open, at + 1)) {
      let j = at + open.length
      while (j < this.html.length && /\s/.test(this.html[j]!)) j++
      if (this.html[j] === '>') return { start: at, after: j + 1 }
    }
    this.noCloseFrom.set(name, from)
    return null
  }
}

/** A link as text: its text, then its URL in brackets unless the text already is the URL. */
function link(attrs: string, inner: string): string {
  const text = walk(inner).replace(/\s+/g, ' ').trim()
  const href = attr(attrs, 'href')
  if (!href || !/^(https?:|mailto:)/i.test(href)) return text
  // Left encoded: the whole text is decoded once at the end.
  if (!text) return href
  const url = decodeEntities(href)
  const shown = decodeEntities(text)
  return shown === url.replace(/^mailto:/i, '') || shown === url ? text : `${text} (${href})`
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

/**
 * Decodes the entities Handlebars escaping produces and the common named ones. A numeric reference
 * to NUL, to a surrogate (0xD800-0xDFFF) or past Unicode (0x10FFFF) is U+FFFD, as in HTML: `&#xD83D;`
 * decoded as itself was a lone surrogate, which made the email's text unstorable as jsonb (a 500).
 */
export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === '#') {
      const code =
        e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number.parseInt(e.slice(1), 10)
      // Too many digits parse as Infinity: past Unicode too.
      const valid = code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff)
      return String.fromCodePoint(valid ? code : 0xfffd)
    }
    // Own entries only: `&constructor;` read Object from the prototype and wrote its source.
    const name = e.toLowerCase()
    return Object.hasOwn(NAMED, name) ? NAMED[name]! : m
  })
}
