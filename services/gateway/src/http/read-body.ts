import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Logger } from '@mailer/observability'
import express, { type NextFunction, type Request, type Response } from 'express'
import { refuseBodyRead } from './body-errors.js'
import { sendError } from './errors.js'

/** Reads the request body into `req.body` (a Buffer), or rejects with the contract's error. */
export type ReadBody = (req: Request, res: Response) => Promise<void>

/**
 * Requests whose client asked `Expect: 100-continue` and has not been told to go on. Node answers
 * 100 by itself when nothing listens to 'checkContinue', before any route has looked at the key:
 * the client then sent its body (up to MAX_BODY_BYTES) to a caller that would be refused.
 */
const continueWithheld = new WeakSet<IncomingMessage>()

/**
 * Takes over Node's answer to `Expect: 100-continue`: the request goes to express without the 100,
 * which is sent only when a route reads the body (readBody), after authentication. An answer
 * written before that closes the connection: the client may never send the body it announced,
 * and whatever it sends next would be taken as that body (RFC 9110 10.1.1).
 */
export function deferContinue(server: Server): void {
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    continueWithheld.add(req)
    const writeHead = res.writeHead
    res.writeHead = function (this: ServerResponse, ...args: Parameters<typeof writeHead>) {
      if (continueWithheld.has(req)) this.setHeader('Connection', 'close')
      return writeHead.apply(this, args)
    } as typeof writeHead
    server.emit('request', req, res)
  })
}

/**
 * The body reader for routes that take one, called after the caller is authenticated: the bytes
 * of an unauthenticated request are never held (express.raw for every content type, so that a
 * missing `Content-Type` still parses; MAX_BODY_BYTES counted after inflating).
 */
export function bodyReader(maxBytes: number): ReadBody {
  const raw = express.raw({ type: () => true, limit: maxBytes })
  return (req, res) =>
    new Promise<void>((resolve, reject) => {
      if (continueWithheld.delete(req)) res.writeContinue()
      raw(req, res, (err?: unknown) => {
        if (!err) return resolve()
        const e = err as { type?: string; code?: string; status?: number }
        if (!e.status || e.status >= 500) return reject(err)
        reject(refuseBodyRead(res, e, maxBytes))
      })
    })
}

/**
 * Route middleware reading the body before the handler, for the routes that take one without a
 * key (the one-click unsubscribe, the dashboard sign-in); a body that cannot be read is answered
 * in the contract's shape, as before.
 */
export const readBodyFirst =
  (readBody: ReadBody, logger: Logger) =>
  (req: Request, res: Response, next: NextFunction): void => {
    readBody(req, res).then(
      () => next(),
      (err: unknown) => sendError(res, err, logger, req.requestId),
    )
  }

/**
 * For an answer given before the body was read (a refused key, an unknown path): unless the whole
 * body has already arrived (Node then drops it and the connection goes on), the connection closes
 * after the answer. Kept open, it would wait for the rest to discard it: up to MAX_BODY_BYTES or
 * more sent for nothing, and a body that stalls held the connection for Node's 300 s, the
 * request's 408 being past (body-timeout.ts stops watching once the answer is sent).
 * A route runs before Node has parsed the rest of the packet that brought its headers: a refusal
 * waits one turn of the event loop, so a small body sent with them counts as arrived.
 */
export async function closeIfBodyUnread(req: Request, res: Response): Promise<void> {
  if (req.complete) return
  await new Promise((resolve) => setImmediate(resolve))
  if (!req.complete && !res.headersSent) res.setHeader('Connection', 'close')
}
