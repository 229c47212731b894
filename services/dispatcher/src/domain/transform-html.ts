import type { ClaimedEmail } from './claimed-email.js'

/** What the rewrite needs from @mailer/links (the `Links` class fits). */
export interface TrackingLinks {
  openUrl(emailId: string): string
  clickUrl(emailId: string, url: string): string
  /** Links to our own public routes (unsubscribe, already tracked) are left alone. */
  isOwnUrl(url: string): boolean
}

/** URLs longer than this are left as they are: wrapped, they would only get longer. */
const MAX_TRACKED_URL = 2048

const ANCHOR_RE = /<a\b[^>]*>/gi
const HREF_RE = /(\shref\s*=\s*)(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))/i

/** `&amp;` and friends as they appear in attribute values, back to the URL they stand for. */
function decodeAttr(s: string): string {
  return s
    .replace(/&(amp|#38|#x26);/gi, '&')
    .replace(/&(quot|#34|#x22);/gi, '"')
    .replace(/&(#39|#x27|apos);/gi, "'")
    .replace(/&(lt|#60);/gi, '<')
    .replace(/&(gt|#62);/gi, '>')
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
      tag.replace(HREF_RE, (whole, lead: string, dq?: string, sq?: string, bare?: string) => {
        const url = decodeAttr((dq ?? sq ?? bare ?? '').trim())
        if (!/^https?:\/\/[^\s]+$/i.test(url) || url.length > MAX_TRACKED_URL || links.isOwnUrl(url))
          return whole
        return `${lead}"${links.clickUrl(email.id, url)}"`
      }),
    )
  }
  if (email.trackOpens) {
    const pixel = `<img src="${links.openUrl(email.id)}" width="1" height="1" alt="" style="display:block;border:0;width:1px;height:1px;overflow:hidden" />`
    const at = out.toLowerCase().lastIndexOf('</body>')
    out = at >= 0 ? `${out.slice(0, at)}${pixel}${out.slice(at)}` : `${out}${pixel}`
  }
  return out
}
