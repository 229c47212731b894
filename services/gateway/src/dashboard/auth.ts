import { type Caller, MailerError } from '@mailer/contracts'
import type { Request, Response } from 'express'
import { isSafeMethod, sameOrigin } from './csrf.js'
import { RevokedSessions, readCookie, type Session, SessionSigner } from './session.js'

export const SESSION_COOKIE = 'mailer_session'
export const CSRF_COOKIE = 'mailer_csrf'
export const CSRF_HEADER = 'x-csrf-token'

export interface DashboardAuthOptions {
  adminKey: string | undefined
  sessionHours: number
  allowedOrigins: readonly string[]
  /** DASHBOARD_COOKIE_SECURE: `auto` follows the request's protocol (env.ts). */
  cookieSecure?: 'auto' | 'true' | 'false'
}

/**
 * Sessions of the dashboard: sign-in with the admin key, the cookies, and the checks every
 * dashboard API request passes (a live session; for state-changing requests the same origin and
 * the CSRF token in both the header and its cookie).
 */
export class DashboardAuth {
  readonly signer: SessionSigner | null
  readonly revoked = new RevokedSessions()

  constructor(private readonly opts: DashboardAuthOptions) {
    this.signer = opts.adminKey ? new SessionSigner(opts.adminKey) : null
  }

  get ttlSeconds(): number {
    return this.opts.sessionHours * 3600
  }

  /** Same-origin check for any state-changing request, sign-in included (login CSRF). */
  checkOrigin(req: Request): void {
    if (!isSafeMethod(req.method) && !sameOrigin(req, this.opts.allowedOrigins)) {
      throw new MailerError('csrf_failed', 'Cross-origin request refused')
    }
  }

  /** The request's session as its cookie says (signed, unexpired), signed out or not. */
  signed(req: Request): Session | null {
    return this.signer?.verify(readCookie(req.get('cookie'), SESSION_COOKIE)) ?? null
  }

  /**
   * The request's live session, or null. While the sign-outs are not all known (the load at start
   * failed, or NATS came back and they are being read again) a session not known to be signed out
   * is 503: passing it could serve one signed out meanwhile, refusing it would sign the operator out.
   */
  current(req: Request): Session | null {
    const s = this.signed(req)
    if (!s || this.revoked.has(s.sid)) return null
    if (!this.revoked.complete)
      throw new MailerError('service_unavailable', 'Dashboard sign-outs are being loaded; retry shortly')
    return s
  }

  /** A signed-in, CSRF-checked admin caller for a dashboard API request. */
  async caller(req: Request): Promise<Caller> {
    const session = this.current(req)
    if (!session)
      throw new MailerError('invalid_session', 'Sign in to the dashboard (session missing or expired)')
    this.checkWrite(req, session)
    return { requestId: req.requestId, via: 'admin', project: null, apiKeyId: null, mode: 'live' }
  }

  /** For a state-changing request: the same origin, and the session's CSRF token in both places. */
  checkWrite(req: Request, session: Session): void {
    if (isSafeMethod(req.method)) return
    this.checkOrigin(req)
    const header = req.get(CSRF_HEADER)
    const cookie = readCookie(req.get('cookie'), CSRF_COOKIE)
    if (!header || header !== cookie || !this.signer!.checkCsrf(session, header)) {
      throw new MailerError('csrf_failed', `Missing or wrong ${CSRF_HEADER} header`)
    }
  }

  /**
   * Whether the browser is taken to reach the dashboard over https: whenever the request came
   * over https (X-Forwarded-Proto when proxies are trusted), or always / never as
   * DASHBOARD_COOKIE_SECURE says: TLS that ends before a proxy that sends no X-Forwarded-Proto
   * looks like plain http here. The cookies' `Secure` and the HSTS header follow it (headers.ts).
   */
  secure(req: Request): boolean {
    const setting = this.opts.cookieSecure ?? 'auto'
    return setting === 'auto' ? req.secure : setting === 'true'
  }

  /**
   * Sets both cookies. No `Path` (express would default it to `/`): the browser scopes them to the
   * directory of the sign-in URL (`…/dashboard/api`), so they go to the dashboard API only,
   * whatever prefix an ingress adds.
   */
  setCookies(req: Request, res: Response, session: Session, cookie: string): void {
    const maxAge = this.ttlSeconds
    const secure = this.secure(req)
    res.append('Set-Cookie', cookieHeader(SESSION_COOKIE, cookie, { maxAge, secure, httpOnly: true }))
    res.append(
      'Set-Cookie',
      cookieHeader(CSRF_COOKIE, this.signer!.csrfToken(session), {
        maxAge,
        secure,
        httpOnly: false,
      }),
    )
  }

  clearCookies(req: Request, res: Response): void {
    const secure = this.secure(req)
    res.append('Set-Cookie', cookieHeader(SESSION_COOKIE, '', { maxAge: 0, secure, httpOnly: true }))
    res.append('Set-Cookie', cookieHeader(CSRF_COOKIE, '', { maxAge: 0, secure, httpOnly: false }))
  }
}

/** Our cookie values are base64url and digits, so they need no encoding. */
export function cookieHeader(
  name: string,
  value: string,
  o: { maxAge: number; secure: boolean; httpOnly: boolean },
): string {
  const parts = [`${name}=${value}`, `Max-Age=${o.maxAge}`, 'SameSite=Strict']
  if (o.httpOnly) parts.push('HttpOnly')
  if (o.secure) parts.push('Secure')
  return parts.join('; ')
}
