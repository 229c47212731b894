import type { NextFunction, Request, Response } from 'express'

const decodes = (segment: string): boolean => {
  try {
    decodeURIComponent(segment)
    return true
  } catch {
    return false
  }
}

/**
 * A path segment that is not valid percent-encoding (`%FF`, `%E0%A4%A`, a lone `%`) is taken
 * literally: express failed to decode such a parameter with a 400 that reached the client as
 * `invalid_body` ("The request body could not be read") on a GET without a body. Escaped here, the
 * segment is an id or slug like any other that no resource has, so it gets the route's own answer
 * (after authentication, as always): 404 `email_not_found`, `project_not_found`, `route_not_found`.
 */
export function literalBadEscapes(req: Request, _res: Response, next: NextFunction): void {
  const q = req.url.indexOf('?')
  const path = q === -1 ? req.url : req.url.slice(0, q)
  if (path.includes('%')) {
    const fixed = path
      .split('/')
      .map((s) => (decodes(s) ? s : s.replaceAll('%', '%25')))
      .join('/')
    if (fixed !== path) req.url = fixed + (q === -1 ? '' : req.url.slice(q))
  }
  next()
}
