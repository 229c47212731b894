import type { Response } from 'express'

/**
 * The small pages behind the public links. Nothing from the request or the token is shown, so
 * there is nothing to escape; the CSP allows inline styles and posting back to this origin only.
 */
const CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"

const layout = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow"><title>${title}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222;line-height:1.5}
button{font:inherit;padding:.6rem 1.2rem;border:0;border-radius:6px;background:#222;color:#fff;cursor:pointer}</style>
</head><body>${body}</body></html>
`

export function sendPage(res: Response, status: number, title: string, body: string): void {
  res
    .status(status)
    .set({
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Security-Policy': CSP,
      'Referrer-Policy': 'no-referrer',
      'X-Content-Type-Options': 'nosniff',
    })
    .send(layout(title, body))
}

export const notFoundPage = (res: Response) =>
  sendPage(
    res,
    404,
    'Link not found',
    '<h1>Link not found</h1><p>This link is not valid. It may have been copied incompletely.</p>',
  )

/** GET /u/:token: a link scanner following it must not unsubscribe anyone, so it only asks. */
export const confirmPage = (res: Response) =>
  sendPage(
    res,
    200,
    'Unsubscribe',
    `<h1>Unsubscribe</h1><p>You will no longer receive these emails from this sender.</p>
<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`,
  )

export const unsubscribedPage = (res: Response) =>
  sendPage(
    res,
    200,
    'Unsubscribed',
    '<h1>You are unsubscribed</h1><p>You will no longer receive these emails.</p>',
  )

export const unavailablePage = (res: Response) =>
  sendPage(
    res,
    503,
    'Try again',
    '<h1>Please try again</h1><p>We could not process this right now. Try again in a minute.</p>',
  )

/** The smallest transparent GIF (1×1, 43 bytes). */
export const PIXEL_GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64')
