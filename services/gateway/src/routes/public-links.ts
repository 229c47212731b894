import type { Bus } from '@mailer/bus'
import { isMailerError, newId, SUBJECTS, UnsubscribeReply, type UnsubscribeRequest } from '@mailer/contracts'
import type { Links } from '@mailer/links'
import type { Logger, Metrics } from '@mailer/observability'
import express, { type Request, type Response, type Router } from 'express'
import { sendError } from '../http/errors.js'
import {
  confirmPage,
  notFoundPage,
  PIXEL_GIF,
  unavailablePage,
  unsubscribedPage,
} from '../http/link-pages.js'
import { bodyReader, closeIfBodyUnread } from '../http/read-body.js'
import type { TrackingHits } from '../infra/tracking-hits.js'

/** The public links (no API key, not in the route catalog). */
export const PUBLIC_LINKS = [
  { path: '/t/o/:token', method: 'GET' },
  { path: '/t/c/:token', method: 'GET' },
  { path: '/u/:token', method: 'GET' },
  { path: '/u/:token', method: 'POST' },
]

interface Deps {
  bus: Bus
  links: Links
  logger: Logger
  metrics: Metrics
  /** Where opens and clicks go once the reader is answered (the TRACKING stream). */
  hits: TrackingHits
  timeoutMs: number
  /** MAX_BODY_BYTES: the one-click POST reads no more than this or UNSUBSCRIBE_MAX_BODY_BYTES. */
  maxBodyBytes: number
}

/**
 * The most of a one-click unsubscribe body read: mail clients send `List-Unsubscribe=One-Click`
 * (RFC 8058), the page's form as little. The link takes no key, so MAX_BODY_BYTES (16 MiB) here
 * let anyone make the gateway hold that much per request.
 */
export const UNSUBSCRIBE_MAX_BODY_BYTES = 8 * 1024

const userAgentOf = (req: Request): string | null => req.get('user-agent')?.slice(0, 1024) ?? null
// Optional in the paths: a link cut short to no token is a bad link like any other (the page, not
// the API's JSON 404).
const tokenOf = (req: Request): string => String(req.params.token ?? '')
const wantsJson = (req: Request): boolean => req.accepts(['html', 'json']) === 'json'

/**
 * Open pixel, click redirect and unsubscribe (contract.md part 5). Tokens are verified here
 * (HMAC, no lookup): a bad one is a 404 page, never an error. The reader is answered first;
 * opens and clicks are then published to the TRACKING stream, which the email service records
 * from whenever it can, so neither a slow nor a missing backend delays a redirect or loses a hit.
 */
export function publicLinksRouter(deps: Deps): Router {
  const { bus, links, logger } = deps
  const hits = deps.metrics.counter('tracking_hits_total', 'Hits on public tracking and unsubscribe links', [
    'kind',
    'outcome',
  ])
  const router = express.Router()
  const invalid = (res: Response, kind: string) => {
    hits.inc({ kind, outcome: 'invalid' })
    notFoundPage(res)
  }

  // The hit's id is made here, once: every publish and delivery of it carries the same one.
  const hitOf = (req: Request, emailId: string) => ({
    id: newId('event'),
    emailId,
    at: new Date().toISOString(),
    userAgent: userAgentOf(req),
    requestId: req.requestId,
  })

  router.get('/t/o{/:token}', (req, res) => {
    const t = links.verify(tokenOf(req), 'open')
    if (!t) return invalid(res, 'open')
    hits.inc({ kind: 'open', outcome: 'ok' })
    res
      .status(200)
      .set({
        'Content-Type': 'image/gif',
        'Cache-Control': 'no-store, no-cache, must-revalidate, private',
        Pragma: 'no-cache',
        Expires: '0',
      })
      .end(PIXEL_GIF)
    // HEAD (link checkers, proxies probing) is not an open.
    if (req.method === 'GET') {
      deps.hits.record({ kind: 'open', ...hitOf(req, t.emailId) })
    }
  })

  router.get('/t/c{/:token}', (req, res) => {
    const t = links.verify(tokenOf(req), 'click')
    // Only http(s) links are ever wrapped; anything else in a token is not ours to follow.
    if (!t || !/^https?:\/\//i.test(t.url)) return invalid(res, 'click')
    hits.inc({ kind: 'click', outcome: 'ok' })
    res.set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' }).redirect(302, t.url)
    if (req.method === 'GET') {
      deps.hits.record({ kind: 'click', ...hitOf(req, t.emailId), url: t.url })
    }
  })

  router.get('/u{/:token}', (req, res) => {
    const t = links.verify(tokenOf(req), 'unsubscribe')
    if (!t) return invalid(res, 'unsubscribe_page')
    hits.inc({ kind: 'unsubscribe_page', outcome: 'ok' })
    confirmPage(res)
  })

  // RFC 8058 one-click: mail clients POST `List-Unsubscribe=One-Click` here; the page's form does too.
  // The token is the caller's credential: checked from the URL before a byte of the body is read
  // (a bad one's body is not waited for), as a key is on the API routes. The body is not used, but
  // read (and its size checked) as for any POST.
  const readSmallBody = bodyReader(Math.min(deps.maxBodyBytes, UNSUBSCRIBE_MAX_BODY_BYTES))
  router.post('/u{/:token}', async (req, res) => {
    const t = links.verify(tokenOf(req), 'unsubscribe')
    if (!t) {
      await closeIfBodyUnread(req, res)
      return invalid(res, 'unsubscribe')
    }
    try {
      await readSmallBody(req, res)
    } catch (err) {
      return sendError(res, err, logger, req.requestId)
    }
    const payload: UnsubscribeRequest = { projectId: t.projectId, contactId: t.contactId }
    try {
      await bus.request(SUBJECTS.contactsUnsubscribe, payload, {
        timeoutMs: deps.timeoutMs,
        schema: UnsubscribeReply,
      })
    } catch (err) {
      // No contact and no tombstone of it (a contact deleted before migration
      // 20261212000000_contact_tombstones): it gets no more email either, so for the reader that is done.
      if (!(isMailerError(err) && err.code === 'contact_not_found')) {
        hits.inc({ kind: 'unsubscribe', outcome: 'failed' })
        logger.warn({ err, requestId: req.requestId, contactId: t.contactId }, 'unsubscribe failed')
        if (wantsJson(req)) {
          res
            .status(503)
            .set('Cache-Control', 'no-store')
            .json({
              error: { type: 'internal_error', code: 'service_unavailable', message: 'Try again shortly' },
            })
        } else unavailablePage(res)
        return
      }
    }
    hits.inc({ kind: 'unsubscribe', outcome: 'ok' })
    logger.info({ requestId: req.requestId, contactId: t.contactId }, 'contact unsubscribed by link')
    if (wantsJson(req)) res.status(200).set('Cache-Control', 'no-store').json({ unsubscribed: true })
    else unsubscribedPage(res)
  })

  return router
}
