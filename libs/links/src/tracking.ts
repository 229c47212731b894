import { eachHref, rewriteHrefs } from './anchors.js'
import { linkUrlLength, ownUrlOf } from './links.js'

/**
 * URLs longer than this, in bytes as the token carries them (UTF-8, JSON-escaped), are left as
 * they are: wrapped, they would only get longer, and the gateway refuses tokens over 4,096
 * characters. Counted in characters, 1,500 non-ASCII ones made a token the gateway answers
 * with "Link not found".
 */
export const MAX_TRACKED_URL = 2048

/**
 * Links click tracking wraps per email, at most: the first ones, the rest are left as they are.
 * Each wrapped link costs an HMAC and grows the email by about a third of its URL plus ~80 bytes:
 * 9 MB of `<a href=https://s.io/>x</a>` became 48 MB of html (30 s of the dispatcher's CPU,
 * ~500 MB of memory), and 2 MB became 11 MB, past common relays' 10 MB limit. Real emails hold
 * tens of links, a long digest a few hundred.
 */
export const MAX_TRACKED_LINKS = 1000

const tokenBytes = (url: string): number => Buffer.byteLength(JSON.stringify(url), 'utf8')

/**
 * Whether click tracking wraps a link to `url` (the URL its href stands for): http(s) URLs only,
 * not over MAX_TRACKED_URL, and not our own public routes (unsubscribe links, links already
 * tracked).
 */
export function isTrackable(url: string, isOwnUrl: (url: string) => boolean): boolean {
  return /^https?:\/\/[^\s]+$/i.test(url) && tokenBytes(url) <= MAX_TRACKED_URL && !isOwnUrl(url)
}

/** The open pixel for the open link `url`. */
export const openPixel = (url: string): string =>
  `<img src="${url}" width="1" height="1" alt="" style="display:block;border:0;width:1px;height:1px;overflow:hidden" />`

/**
 * The html with its trackable links (the first MAX_TRACKED_LINKS) pointing where `clickUrl` says;
 * the others are left as they are.
 */
export function trackClicks(
  html: string,
  isOwnUrl: (url: string) => boolean,
  clickUrl: (url: string) => string,
): string {
  return rewriteHrefs(html, (url) => (isTrackable(url, isOwnUrl) ? clickUrl(url) : null), MAX_TRACKED_LINKS)
}

/**
 * How many UTF-8 bytes the dispatcher's tracking adds to `html` (dispatcher transformHtml): the
 * click links that replace hrefs and the open pixel. Links and pixel are ASCII of lengths known
 * without signing them, so this needs `publicUrl` (PUBLIC_URL) and an id of the email's length,
 * not the tracking secret: the email service measures it at accept, where the size limit is
 * checked, so a tracked email is never larger than the limit when it is sent.
 */
export function trackingGrowth(
  html: string,
  opts: { publicUrl: string; emailId: string; clicks: boolean; opens: boolean },
): number {
  const base = opts.publicUrl.replace(/\/+$/, '')
  const isOwnUrl = ownUrlOf(base)
  let bytes = opts.opens
    ? openPixel('').length + linkUrlLength(base, { kind: 'open', emailId: opts.emailId })
    : 0
  if (!opts.clicks) return bytes
  let tracked = 0
  eachHref(html, ({ url, start, end }) => {
    if (!isTrackable(url, isOwnUrl)) return true
    const wrapped = linkUrlLength(base, { kind: 'click', emailId: opts.emailId, url })
    // `href="<link>"` in place of the attribute as written.
    bytes += 'href=""'.length + wrapped - Buffer.byteLength(html.slice(start, end), 'utf8')
    return ++tracked < MAX_TRACKED_LINKS
  })
  return bytes
}
