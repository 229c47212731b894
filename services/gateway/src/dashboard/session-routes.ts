import type { Bus } from '@mailer/bus'
import { MailerError, parseBody, SUBJECTS } from '@mailer/contracts'
import type { Logger, Metrics } from '@mailer/observability'
import { type Request, type Response, Router } from 'express'
import { z } from 'zod'
import { jsonBody } from '../http/body.js'
import { sendError } from '../http/errors.js'
import type { DashboardSignouts } from '../infra/dashboard-signouts.js'
import type { DashboardAuth } from './auth.js'
import type { Session } from './session.js'

/** Trimmed like the Bearer token (and ADMIN_API_KEY): a pasted key often brings a line break. */
const SignInBody = z.strictObject({ key: z.string().trim().min(1).max(4096) })
const SignoutMessage = z.object({ sid: z.string(), expiresAt: z.number().int() })

/**
 * Failed sign-ins per client address: the admin key is chosen by the operator and may be short,
 * so guessing is slowed to `max` failures per window. Bounded: the oldest entries go first.
 */
export class SignInLimiter {
  private readonly failures = new Map<string, { count: number; resetAt: number }>()

  constructor(
    private readonly max = 10,
    private readonly windowMs = 5 * 60_000,
    private readonly capacity = 10_000,
  ) {}

  blocked(ip: string, now = Date.now()): boolean {
    const f = this.failures.get(ip)
    return f !== undefined && f.resetAt > now && f.count >= this.max
  }

  fail(ip: string, now = Date.now()): void {
    const f = this.failures.get(ip)
    if (!f || f.resetAt <= now) {
      if (this.failures.size >= this.capacity) this.failures.delete(this.failures.keys().next().value!)
      this.failures.set(ip, { count: 1, resetAt: now + this.windowMs })
    } else f.count++
  }

  succeed(ip: string): void {
    this.failures.delete(ip)
  }
}

const sessionBody = (auth: DashboardAuth, s: Session) => ({
  expiresAt: new Date(s.expiresAt * 1000).toISOString(),
  csrfToken: auth.signer!.csrfToken(s),
})

/** POST (sign in with the admin key), GET (the current session) and DELETE (sign out). */
export function sessionRouter(deps: {
  auth: DashboardAuth
  bus: Bus
  signouts: DashboardSignouts
  logger: Logger
  metrics: Metrics
}): Router {
  const { auth, bus, signouts, logger } = deps
  const router = Router()
  const limiter = new SignInLimiter()
  const signIns = deps.metrics.counter('dashboard_signins_total', 'Dashboard sign-in attempts', ['outcome'])
  // Every replica forgets a signed-out session at once, not only the one that handled the sign-out
  // (one that misses this reads it from the database: infra/dashboard-signouts.ts).
  bus.subscribe(SUBJECTS.dashboardSignout, (payload) => {
    const m = SignoutMessage.safeParse(payload)
    if (m.success) auth.revoked.add(m.data.sid, m.data.expiresAt)
  })

  router.post('/dashboard/api/session', (req: Request, res: Response) => {
    try {
      auth.checkOrigin(req)
      const { key } = parseBody(SignInBody, jsonBody(req))
      const ip = req.ip ?? 'unknown'
      if (limiter.blocked(ip)) {
        signIns.inc({ outcome: 'limited' })
        throw new MailerError('rate_limited', 'Too many failed sign-ins; try again later')
      }
      if (!auth.signer?.isAdminKey(key)) {
        limiter.fail(ip)
        signIns.inc({ outcome: auth.signer ? 'invalid' : 'unconfigured' })
        logger.warn({ requestId: req.requestId, ip }, 'dashboard sign-in refused')
        throw new MailerError(
          'invalid_api_key',
          auth.signer ? 'Wrong admin key' : 'No ADMIN_API_KEY is configured',
        )
      }
      limiter.succeed(ip)
      const { session, cookie } = auth.signer.issue(auth.ttlSeconds)
      auth.setCookies(req, res, session, cookie)
      signIns.inc({ outcome: 'ok' })
      logger.info({ requestId: req.requestId, ip }, 'dashboard sign-in')
      res.set('Cache-Control', 'no-store').json(sessionBody(auth, session))
    } catch (err) {
      sendError(res, err, logger, req.requestId)
    }
  })

  router.get('/dashboard/api/session', (req: Request, res: Response) => {
    try {
      const s = auth.current(req)
      if (!s) throw new MailerError('invalid_session', 'Not signed in')
      res.set('Cache-Control', 'no-store').json(sessionBody(auth, s))
    } catch (err) {
      sendError(res, err, logger, req.requestId)
    }
  })

  router.delete('/dashboard/api/session', async (req: Request, res: Response) => {
    try {
      // Not `current`: a sign-out is taken even while the sign-outs are being loaded.
      const s = auth.signed(req)
      if (s && !auth.revoked.has(s.sid)) {
        auth.checkWrite(req, s) // origin and CSRF token: a foreign page cannot sign the operator out
        // Stored first: a replica that misses the announcement (restarted since, or away from
        // NATS) reads it there. If it cannot be stored nothing changes, and a retry signs out.
        await signouts.record(s.sid, s.expiresAt)
        auth.revoked.add(s.sid, s.expiresAt)
        bus.publish(SUBJECTS.dashboardSignout, { sid: s.sid, expiresAt: s.expiresAt })
      }
      auth.clearCookies(req, res)
      res.set('Cache-Control', 'no-store').json({ signedOut: true })
    } catch (err) {
      sendError(res, err, logger, req.requestId)
    }
  })
  return router
}
