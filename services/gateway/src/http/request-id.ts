import { requestIdFor } from '@mailer/contracts'
import type { NextFunction, Request, Response } from 'express'

declare global {
  namespace Express {
    interface Request {
      requestId: string
    }
  }
}

/** Uses the caller's X-Request-Id when usable, else makes one; echoes it on every response. */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  req.requestId = requestIdFor(req.get('x-request-id'))
  res.setHeader('X-Request-Id', req.requestId)
  next()
}
