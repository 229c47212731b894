import { randomUUID } from 'node:crypto'
import type { NextFunction, Request, Response } from 'express'

const SAFE_ID = /^[\w.:@/+=-]{1,200}$/

declare global {
  namespace Express {
    interface Request {
      requestId: string
    }
  }
}

/** A fresh id, for a request that brought none (or none we keep). */
export const newRequestId = (): string => `req_${randomUUID().replaceAll('-', '')}`

/** The caller's X-Request-Id when it is sane, else a fresh one. */
export const requestIdFor = (given: string | undefined): string =>
  given && SAFE_ID.test(given) ? given : newRequestId()

/** Uses the caller's X-Request-Id when it is sane, else makes one; echoes it on every response. */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  req.requestId = requestIdFor(req.get('x-request-id'))
  res.setHeader('X-Request-Id', req.requestId)
  next()
}
