import { MailerError } from '@mailer/contracts'
import type { NextFunction, Request, Response } from 'express'
import type { Refuse } from './client-errors.js'

/**
 * A request body that stops arriving: nothing more for `idleMs` while the request is not complete
 * (a Content-Length larger than what the client sends, a client that hung) is answered 408
 * `request_timeout` and its connection closed. Node's own `requestTimeout` (300 s) is a limit on
 * the whole request, so such a request held its connection and its caller for five minutes; a
 * shorter whole-request limit would cut a large upload over a slow link, which keeps sending and
 * is never idle that long (nginx's `client_body_timeout` is the same rule).
 *
 * Progress is the socket's `bytesRead`, read every quarter of `idleMs`: a 'data' listener on the
 * socket would take it off the HTTP parser's fast path for the connection's whole life.
 */
export function bodyTimeout(idleMs: number, refuse: Refuse) {
  const step = Math.max(25, Math.floor(idleMs / 4))
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!hasBody(req)) {
      next()
      return
    }
    const socket = req.socket
    let seen = socket.bytesRead
    let lastProgress = Date.now()
    const timer = setInterval(() => {
      if (req.complete || res.headersSent || socket.destroyed) clearInterval(timer)
      else if (socket.bytesRead !== seen) {
        seen = socket.bytesRead
        lastProgress = Date.now()
      } else if (Date.now() - lastProgress >= idleMs) {
        clearInterval(timer)
        const s = Math.round(idleMs / 1000)
        const e = new MailerError(
          'request_timeout',
          `The request body stopped arriving: nothing more came for ${s} s before it was complete`,
        )
        refuse(socket, e, 'body_idle')
      }
    }, step)
    timer.unref()
    res.once('close', () => clearInterval(timer))
    next()
  }
}

/** Whether the request says a body follows (type-is's rule, which express.raw also follows). */
function hasBody(req: Request): boolean {
  const length = req.headers['content-length']
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}
