import type { NextFunction, Request, Response } from 'express'

/**
 * The dashboard's Content-Security-Policy. Scripts come only from our own files (no inline script,
 * no eval). Inline styles are allowed because the email preview is an `<iframe srcdoc>`, which
 * inherits this policy, and emails are styled inline; styles cannot run code. Email images may
 * come from any https host (or be data: URLs) so a preview looks like the email; `frame-src`
 * stays closed so a link clicked inside the preview cannot load another site into the frame.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: https:",
  "font-src 'self'",
  "connect-src 'self'",
  "frame-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ')

/**
 * Security headers on every /dashboard answer, pages and API alike. `https(req)`: whether the
 * browser came over https (DashboardAuth.secure: DASHBOARD_COOKIE_SECURE, else the request's
 * protocol), for HSTS, which browsers take only from an https answer anyway.
 */
export const securityHeaders =
  (https: (req: Request) => boolean) =>
  (req: Request, res: Response, next: NextFunction): void => {
    res.set({
      'Content-Security-Policy': DASHBOARD_CSP,
      'X-Frame-Options': 'DENY',
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'same-origin',
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Resource-Policy': 'same-origin',
      'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
    })
    if (https(req)) res.set('Strict-Transport-Security', 'max-age=31536000')
    next()
  }
