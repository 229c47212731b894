/**
 * Reading the links of an html body as a mail client would: the `<a>` tags, and the URL each
 * one's `href` stands for. Click tracking rewrites them at dispatch (the dispatcher) and measures
 * that rewrite at accept (the email service), so both read the html the same way.
 */

// Where an <a> tag may start; where it ends is found by `TagEnds`.
const ANCHOR_START = /<a\b/gi
// One attribute of a tag: its name and its value (double-quoted, single-quoted or bare), read in
// turn from the tag's start, so text inside another attribute's value (`title="see href=…"`) is
// never taken for an attribute. A bare value runs to whitespace or `>`, as in HTML: `=`, `<`, a
// quote or a backtick inside it is kept (a parse error for HTML, not an end), so
// `href=https://x/p?a=1&b=2` is the whole URL, not `https://x/p?a` followed by `=1&b=2`.
const ATTR_RE = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>][^\s>]*)))?/g

/**
 * Named references a URL can hold (HTML's full table has 2,000+; an unknown name is left as it
 * is, as browsers do). Names are case-sensitive, with the few upper-case legacy spellings.
 */
const NAMED: Readonly<Record<string, string>> = {
  amp: '&',
  AMP: '&',
  quot: '"',
  QUOT: '"',
  apos: "'",
  lt: '<',
  LT: '<',
  gt: '>',
  GT: '>',
  equals: '=',
  sol: '/',
  colon: ':',
  quest: '?',
  num: '#',
  percnt: '%',
  plus: '+',
  commat: '@',
  excl: '!',
  dollar: '$',
  lpar: '(',
  rpar: ')',
  ast: '*',
  comma: ',',
  period: '.',
  semi: ';',
  lowbar: '_',
  tilde: '~',
  lsqb: '[',
  rsqb: ']',
  nbsp: '\u00a0',
}

const REF_RE = /&(?:#(\d+);?|#[xX]([0-9a-fA-F]+);?|([A-Za-z]+);)/g

/**
 * The URL an attribute value stands for, as a mail client reads it: every numeric character
 * reference (decimal or hex, `;` optional) and the named ones a URL can hold. Template engines
 * escape more than `&`: Handlebars writes `=` as `&#x3D;`, so a link made with `{{url}}` would
 * otherwise redirect to `?a&#x3D;1` instead of `?a=1`.
 */
function decodeAttr(s: string): string {
  return s.replace(REF_RE, (whole, dec?: string, hex?: string, name?: string) => {
    // Own entries only: `&toString;` read a function from Object.prototype, and its source (with
    // spaces) made the link no URL, so it went out untracked.
    if (name !== undefined) return Object.hasOwn(NAMED, name) ? NAMED[name]! : whole
    const cp = dec !== undefined ? Number.parseInt(dec, 10) : Number.parseInt(hex!, 16)
    // NUL, surrogates and values past Unicode are the replacement character in HTML.
    const valid = cp > 0 && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff)
    return String.fromCodePoint(valid ? cp : 0xfffd)
  })
}

/** A link: the URL its href stands for, and where the href attribute sits in the html. */
export interface Href {
  url: string
  /** The attribute (`href="…"`) is `html.slice(start, end)`. */
  start: number
  end: number
}

/** The first href of the tag `html.slice(from, to)` (as browsers read a repeated one), if it has a value. */
function hrefOf(html: string, from: number, to: number): Href | null {
  const tag = html.slice(from, to)
  // The shared global regex, restarted per tag (nothing else runs between its calls here): a
  // copy per link was an allocation per link of every tracked email.
  const attrs = ATTR_RE
  attrs.lastIndex = 2 // past `<a`
  for (let m = attrs.exec(tag); m; m = attrs.exec(tag)) {
    if (m[1]!.toLowerCase() !== 'href') continue
    const value = m[2] ?? m[3] ?? m[4]
    if (value === undefined) return null
    return { url: decodeAttr(value.trim()), start: from + m.index, end: from + m.index + m[0].length }
  }
  return null
}

/**
 * Calls `visit` for the href of every `<a …>` tag of the html, in order, until it answers false.
 * A tag is `<a` then (as a word ends there) anything up to the first `>` outside quotes, a quote
 * running to the next same quote (so a value may hold `>`); one that never ends (no `>`, or a
 * quote that is never closed) is text, and the search goes on after its `<a`.
 */
export function eachHref(html: string, visit: (href: Href) => boolean): void {
  const ends = new TagEnds(html)
  // A regex of its own per call: `visit` may read another html meanwhile.
  const starts = new RegExp(ANCHOR_START)
  for (let m = starts.exec(html); m; m = starts.exec(html)) {
    const end = ends.after(m.index + 2)
    if (end === -1) continue
    starts.lastIndex = end
    const href = hrefOf(html, m.index, end)
    if (href && !visit(href)) return
  }
}

/**
 * The html with the href of its links replaced by `href="<what rewrite answers for the URL>"`,
 * for at most `max` links; a link `rewrite` answers null for is left as it is, and so is every
 * link after the `max`th rewritten one.
 */
export function rewriteHrefs(html: string, rewrite: (url: string) => string | null, max: number): string {
  if (max <= 0) return html
  let out = ''
  let copied = 0
  let rewritten = 0
  eachHref(html, ({ url, start, end }) => {
    const next = rewrite(url)
    if (next === null) return true
    out += `${html.slice(copied, start)}href="${next}"`
    copied = end
    return ++rewritten < max
  })
  return out + html.slice(copied)
}

const GT = 0x3e
const DQUOTE = 0x22
const SQUOTE = 0x27
// Where a scan is: outside quotes, or inside "…" or '…'; one bit each in `TagEnds.dead`.
const OUTSIDE = 1
const IN_DOUBLE = 2
const IN_SINGLE = 4

/**
 * Where tags end, read by hand: `/<a\b(?:[^>"']|"[^"]*"|'[^']*')*>/gi` scanned to the end of the
 * html from every `<a` with no `>` after it (40,000 `<a ` took 12 s, 200 KB 32 s, past the claim
 * window, with the dispatcher's event loop blocked). The scan is a walk through (position, state)
 * pairs whose next step depends on nothing else, so two scans that meet go on alike: a scan that
 * fails ran to the end, and so does any scan reaching a pair it passed through. Those pairs are
 * kept (`dead`), and a later scan stops at the first it reaches: failed scans pass each pair once.
 */
class TagEnds {
  // Per position, the states from which a scan there runs to the end; made at the first failure.
  private dead: Uint8Array | null = null

  constructor(private readonly html: string) {}

  /** The index past the `>` ending the tag whose attributes start at `from`, or -1 if none. */
  after(from: number): number {
    const end = this.scan(from, null)
    if (end === -1) {
      this.dead ??= new Uint8Array(this.html.length)
      this.scan(from, this.dead)
    }
    return end
  }

  /** The scan from `from`, outside quotes; with `mark`, every pair it passes is marked dead. */
  private scan(from: number, mark: Uint8Array | null): number {
    const { html, dead } = this
    let state = OUTSIDE
    for (let i = from; i < html.length; i++) {
      if (dead !== null && (dead[i]! & state) !== 0) return -1
      if (mark !== null) mark[i] = mark[i]! | state
      const c = html.charCodeAt(i)
      if (state === OUTSIDE) {
        if (c === GT) return i + 1
        if (c === DQUOTE) state = IN_DOUBLE
        else if (c === SQUOTE) state = IN_SINGLE
      } else if (c === (state === IN_DOUBLE ? DQUOTE : SQUOTE)) {
        state = OUTSIDE
      }
    }
    return -1
  }
}
