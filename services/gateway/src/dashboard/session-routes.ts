import type { Bus } from '@mailer/bus'
import { MailerError, parseBody, type SignoutMessage, SUBJECTS } from '@mailer/contracts'
import type { Logger, Metrics } from '@mailer/observability'
import { type NextFunction, type Request, type Response, Router } from 'express'
import { z } from 'zod'
import { signinClient } from '../domain/signin-client.js'
import { waitText } from '../domain/wait-text.js'
import { jsonBody } from '../http/body.js'
import { sendError } from '../http/errors.js'
import { bodyReader, closeIfBodyUnread, readBodyFirst } from '../http/read-body.js'
import type { DashboardSignins } from '../infra/dashboard-signins.js'
import type { DashboardSignouts } from '../infra/dashboard-signouts.js'
import type { DashboardAuth } from './auth.js'
import type { Session } from './session.js'

/** Trimmed like the Bearer token (and ADMIN_API_KEY): a pasted key often brings a line break. */
const SignInBody = z.strictObject({ key: z.string().trim().min(1).max(4096) })

/**
 * The most of a sign-in body read: a key of 4096 characters, each written as a 6-byte `\uXXXX`,
 * with room to spare. The sign-in takes no key, so MAX_BODY_BYTES (16 MiB) here let anyone make
 * the gateway hold that much per request, which the key-first rule stops on every other route.
 */
export const SIGNIN_MAX_BODY_BYTES = 64 * 1024

const sessionBody = (auth: DashboardAuth, s: Session) => ({
  signedIn: true as const,
  expiresAt: new Date(s.expiresAt * 1000).toISOString(),
  csrfToken: auth.signer!.csrfToken(s),
})

/** POST (sign in with the admin key), GET (the current session) and DELETE (sign out). */
export function sessionRouter(deps: {
  auth: DashboardAuth
  bus: Bus
  signins: DashboardSignins
  signouts: DashboardSignouts
  logger: Logger
  metrics: Metrics
  /** MAX_BODY_BYTES: the sign-in reads no more than this or SIGNIN_MAX_BODY_BYTES, the smaller. */
  maxBodyBytes: number
}): Router {
  const { auth, bus, signins, signouts, logger } = deps
  const router = Router()
  const signIns = deps.metrics.counter('dashboard_signins_total', 'Dashboard sign-in attempts', ['outcome'])
  // The key comes in the body, so there is no caller to authenticate before reading it; what the
  // headers can refuse (another origin) is refused first, and the body read is kept small.
  const body = readBodyFirst(bodyReader(Math.min(deps.maxBodyBytes, SIGNIN_MAX_BODY_BYTES)), logger)
  const originFirst = async (req: Request, res: Response, next: NextFunction) => {
    try {
      auth.checkOrigin(req)
    } catch (err) {
      await closeIfBodyUnread(req, res) // its body is not waited for (read-body.ts)
      sendError(res, err, logger, req.requestId)
      return
    }
    next()
  }
  router.post('/dashboard/api/session', originFirst, body, async (req: Request, res: Response) => {
    try {
      const { key } = parseBody(SignInBody, jsonBody(req))
      // The address the ingress saw (TRUST_PROXY), counted per client (an IPv4 address, an IPv6
      // /64: domain/signin-client.ts) in PostgreSQL before the key is compared, so every replica
      // and a restarted one see the same count (infra/dashboard-signins.ts).
      const ip = req.ip ?? 'unknown'
      const client = signinClient(req.ip)
      const attempt = await signins.attempt(client)
      if (!attempt.allowed) {
        signIns.inc({ outcome: 'limited' })
        res.set('Retry-After', String(attempt.retryAfterSeconds)) // until the lockout ends
        // Said in the message too: the sign-in page shows it, and "later" left the operator guessing.
        throw new MailerError(
          'rate_limited',
          `Too many failed sign-ins; try again in ${waitText(attempt.retryAfterSeconds)}`,
        )
      }
      if (!auth.signer?.isAdminKey(key)) {
        signIns.inc({ outcome: auth.signer ? 'invalid' : 'unconfigured' })
        logger.warn({ requestId: req.requestId, ip, client }, 'dashboard sign-in refused')
        throw new MailerError(
          'invalid_api_key',
          auth.signer ? 'Wrong admin key' : 'No ADMIN_API_KEY is configured',
        )
      }
      await signins.succeeded(client) // the whole /64 starts again, as it was counted
      const { session, cookie } = auth.signer.issue(auth.ttlSeconds)
      auth.setCookies(req, res, session, cookie)
      signIns.inc({ outcome: 'ok' })
      logger.info({ requestId: req.requestId, ip }, 'dashboard sign-in')
      res.set('Cache-Control', 'no-store').json(sessionBody(auth, session))
    } catch (err) {
      sendError(res, err, logger, req.requestId)
    }
  })

  // Asked by every page load before sign-in, so "not signed in" is an answer, not an error: a
  // 401 here put a red "Failed to load resource" line in the browser console of every operator
  // who opens the dashboard. The admin API behind the session still answers 401 invalid_session.
  router.get('/dashboard/api/session', (req: Request, res: Response) => {
    try {
      const s = auth.current(req)
      res.set('Cache-Control', 'no-store').json(s ? sessionBody(auth, s) : { signedIn: false })
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
        // Every replica forgets the session at once (startSignoutSync listens: infra/dashboard-signouts.ts).
        bus.publish(SUBJECTS.dashboardSignout, {
          sid: s.sid,
          expiresAt: s.expiresAt,
        } satisfies SignoutMessage)
        // Answered once NATS has the announcement, as every other cache change is: a copied
        // cookie is then refused by every replica by the time the browser hears it signed out.
        // Without NATS (a flush waits for the reconnect) the other replicas read the stored
        // sign-out (above) instead: the answer waits 2 s at most.
        await Promise.race([
          bus.flush(),
          new Promise((_, reject) =>
            setTimeout(() => reject(new Error('NATS did not confirm within 2 s')), 2_000).unref(),
          ),
        ]).catch((err) => logger.warn({ err }, 'sign-out stored but not announced'))
      }
      auth.clearCookies(req, res)
      res.set('Cache-Control', 'no-store').json({ signedOut: true })
    } catch (err) {
      sendError(res, err, logger, req.requestId)
    }
  })
  return router
}
