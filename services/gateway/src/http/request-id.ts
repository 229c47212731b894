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

/** Uses the caller's X-Request-Id when it is sane, else makes one; echoes it on every response. */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  const given = req.get('x-request-id')
  req.requestId = given && SAFE_ID.test(given) ? given : newRequestId()
  res.setHeader('X-Request-Id', req.requestId)
  next()
}
