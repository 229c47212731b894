import type { ClaimedEmail } from './claimed-email.js'

/** What the rewrite needs from @mailer/links (the `Links` class fits). */
export interface TrackingLinks {
  openUrl(emailId: string): string
  clickUrl(emailId: string, url: string): string
  /** Links to our own public routes (unsubscribe, already tracked) are left alone. */
  isOwnUrl(url: string): boolean
}

/**
 * URLs longer than this, in bytes as the token carries them (UTF-8, JSON-escaped), are left as
 * they are: wrapped, they would only get longer, and the gateway refuses tokens over 4,096
 * characters. Counted in characters, 1,500 non-ASCII ones made a token the gateway answers
 * with "Link not found".
 */
const MAX_TRACKED_URL = 2048
const tokenBytes = (url: string): number => Buffer.byteLength(JSON.stringify(url), 'utf8')

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

/**
 * The tag with its `href` (the first, as browsers read a repeated one) replaced by what `rewrite`
 * answers for the URL it stands for; unchanged when it answers null or the tag has no href.
 */
function withHref(tag: string, rewrite: (url: string) => string | null): string {
  // The shared global regex, restarted per tag (nothing else runs between its calls here): a
  // copy per link was an allocation per link of every tracked email.
  const attrs = ATTR_RE
  attrs.lastIndex = 2 // past `<a`
  for (let m = attrs.exec(tag); m; m = attrs.exec(tag)) {
    if (m[1]!.toLowerCase() !== 'href') continue
    const value = m[2] ?? m[3] ?? m[4]
    const next = value === undefined ? null : rewrite(decodeAttr(value.trim()))
    return next === null ? tag : `${tag.slice(0, m.index)}href="${next}"${tag.slice(m.index + m[0].length)}`
  }
  return tag
}

/**
 * The step of the render pipeline where open and click tracking rewrite the HTML: with
 * `trackClicks`, every `<a href="http(s)://…">` points at the click route (the original URL is
 * inside the signed token); with `trackOpens`, a 1×1 pixel is added before `</body>` (or at the
 * end). Without tracking, or without links configured, the HTML is delivered exactly as sent.
 */
export function transformHtml(email: ClaimedEmail, html: string, links: TrackingLinks | null = null): string {
  if (!links || (!email.trackOpens && !email.trackClicks)) return html
  let out = html
  if (email.trackClicks) {
    out = rewriteAnchors(out, (url) =>
      !/^https?:\/\/[^\s]+$/i.test(url) || tokenBytes(url) > MAX_TRACKED_URL || links.isOwnUrl(url)
        ? null
        : links.clickUrl(email.id, url),
    )
  }
  if (email.trackOpens) {
    const pixel = `<img src="${links.openUrl(email.id)}" width="1" height="1" alt="" style="display:block;border:0;width:1px;height:1px;overflow:hidden" />`
    const at = lastBodyClose(out)
    out = at >= 0 ? `${out.slice(0, at)}${pixel}${out.slice(at)}` : `${out}${pixel}`
  }
  return out
}

/**
 * Where the last `</body>` (any case) starts, or -1. Searched in the html itself: the index of
 * `out.toLowerCase()` was off by one for each `İ` before it (it lowercases to two code units),
 * which put the pixel inside the tag (`</bo<img …>dy>`).
 */
function lastBodyClose(html: string): number {
  const re = /<\/body>/gi
  let at = -1
  for (let m = re.exec(html); m; m = re.exec(html)) at = m.index
  return at
}

/**
 * Every `<a …>` tag of the html replaced by what `withHref` makes of it with `rewrite`: a tag is
 * `<a` then (as a word ends there) anything up to the first `>` outside quotes, a quote running
 * to the next same quote (so a value may hold `>`); one that never ends (no `>`, or a quote that
 * is never closed) is text, and the search goes on after its `<a`.
 */
function rewriteAnchors(html: string, rewrite: (url: string) => string | null): string {
  const ends = new TagEnds(html)
  // The shared global regex, restarted per call; nothing else uses it between its calls here.
  const starts = ANCHOR_START
  starts.lastIndex = 0
  let out = ''
  let copied = 0
  for (let m = starts.exec(html); m; m = starts.exec(html)) {
    const end = ends.after(m.index + 2)
    if (end === -1) continue
    out += html.slice(copied, m.index) + withHref(html.slice(m.index, end), rewrite)
    copied = end
    starts.lastIndex = end
  }
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
