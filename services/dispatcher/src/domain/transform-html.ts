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

// An opening <a> tag, quoted values (which may hold `>`) taken whole.
const ANCHOR_RE = /<a\b(?:[^>"']|"[^"]*"|'[^']*')*>/gi
// One attribute of a tag: its name and its value (double-quoted, single-quoted or bare), read in
// turn from the tag's start, so text inside another attribute's value (`title="see href=…"`) is
// never taken for an attribute.
const ATTR_RE = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g

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
    out = out.replace(ANCHOR_RE, (tag) =>
      withHref(tag, (url) =>
        !/^https?:\/\/[^\s]+$/i.test(url) || tokenBytes(url) > MAX_TRACKED_URL || links.isOwnUrl(url)
          ? null
          : links.clickUrl(email.id, url),
      ),
    )
  }
  if (email.trackOpens) {
    const pixel = `<img src="${links.openUrl(email.id)}" width="1" height="1" alt="" style="display:block;border:0;width:1px;height:1px;overflow:hidden" />`
    const at = out.toLowerCase().lastIndexOf('</body>')
    out = at >= 0 ? `${out.slice(0, at)}${pixel}${out.slice(at)}` : `${out}${pixel}`
  }
  return out
}
