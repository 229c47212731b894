import type { Socket } from 'node:net'
import { MailerError } from '@mailer/contracts'
import type { NextFunction, Request, Response } from 'express'
import type { Refuse } from './client-errors.js'

interface Watched {
  req: Request
  res: Response
  socket: Socket
  /** The socket's bytesRead when last seen to move, and when. */
  seen: number
  lastProgress: number
}

/**
 * A request body that stops arriving: nothing more for `idleMs` while the request is not complete
 * (a Content-Length larger than what the client sends, a client that hung) is answered 408
 * `request_timeout` and its connection closed. Node's own `requestTimeout` (300 s) is a limit on
 * the whole request, so such a request held its connection and its caller for five minutes; a
 * shorter whole-request limit would cut a large upload over a slow link, which keeps sending and
 * is never idle that long (nginx's `client_body_timeout` is the same rule).
 *
 * Progress is the socket's `bytesRead`, read every quarter of `idleMs` by one timer for all the
 * requests being read (a timer of each request's own was created and cleared for every send on
 * the hot path); a 'data' listener on the socket would take it off the HTTP parser's fast path
 * for the connection's whole life.
 */
export function bodyTimeout(idleMs: number, refuse: Refuse) {
  const step = Math.max(25, Math.floor(idleMs / 4))
  const watched = new Set<Watched>()
  let timer: NodeJS.Timeout | undefined

  const sweep = () => {
    const now = Date.now()
    for (const w of watched) {
      if (w.req.complete || w.res.headersSent || w.socket.destroyed) watched.delete(w)
      else if (w.socket.bytesRead !== w.seen) {
        w.seen = w.socket.bytesRead
        w.lastProgress = now
      } else if (now - w.lastProgress >= idleMs) {
        watched.delete(w)
        const s = Math.round(idleMs / 1000)
        const e = new MailerError(
          'request_timeout',
          `The request body stopped arriving: nothing more came for ${s} s before it was complete`,
        )
        refuse(w.socket, e, 'body_idle')
      }
    }
    if (watched.size === 0) {
      clearInterval(timer)
      timer = undefined
    }
  }

  return (req: Request, res: Response, next: NextFunction): void => {
    if (!hasBody(req)) {
      next()
      return
    }
    const w: Watched = { req, res, socket: req.socket, seen: req.socket.bytesRead, lastProgress: Date.now() }
    watched.add(w)
    if (!timer) {
      timer = setInterval(sweep, step)
      timer.unref()
    }
    res.once('close', () => watched.delete(w))
    next()
  }
}

/** Whether the request says a body follows (type-is's rule, which express.raw also follows). */
function hasBody(req: Request): boolean {
  const length = req.headers['content-length']
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}
