import { openPixel, trackClicks } from '@mailer/links'
import type { ClaimedEmail } from './claimed-email.js'

/** What the rewrite needs from @mailer/links (the `Links` class fits). */
export interface TrackingLinks {
  openUrl(emailId: string): string
  clickUrl(emailId: string, url: string): string
  /** Links to our own public routes (unsubscribe, already tracked) are left alone. */
  isOwnUrl(url: string): boolean
}

/**
 * The step of the render pipeline where open and click tracking rewrite the HTML: with
 * `trackClicks`, the first MAX_TRACKED_LINKS `<a href="http(s)://…">` point at the click route
 * (the original URL is inside the signed token; @mailer/links `trackClicks` says which links);
 * with `trackOpens`, a 1×1 pixel is added before `</body>` (or at the end). Without tracking, or
 * without links configured, the HTML is delivered exactly as sent. The email service measured
 * what this adds when it accepted the email (`trackingGrowth`).
 */
export function transformHtml(email: ClaimedEmail, html: string, links: TrackingLinks | null = null): string {
  if (!links || (!email.trackOpens && !email.trackClicks)) return html
  let out = html
  if (email.trackClicks) {
    out = trackClicks(
      out,
      (url) => links.isOwnUrl(url),
      (url) => links.clickUrl(email.id, url),
    )
  }
  if (email.trackOpens) {
    const pixel = openPixel(links.openUrl(email.id))
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
