import type { RequestHandler, Router } from 'express'
import { match } from 'path-to-regexp'

export interface Served {
  path: string
  method: string
}

/**
 * The methods each known path is served with, for the answer to any other method: 405
 * `method_not_allowed` with the `Allow` header RFC 9110 requires of a 405 (HEAD goes with GET,
 * as express serves it), or 404 `route_not_found` for a path that is not served at all.
 */
export class AllowedMethods {
  private readonly entries: { matches: ReturnType<typeof match>; methods: Set<string> }[] = []

  constructor(served: Served[]) {
    const byPath = new Map<string, Set<string>>()
    for (const { path, method } of served) {
      const methods = byPath.get(path) ?? new Set<string>()
      methods.add(method.toUpperCase())
      if (method.toUpperCase() === 'GET') methods.add('HEAD')
      byPath.set(path, methods)
    }
    for (const [path, methods] of byPath) this.entries.push({ matches: match(path), methods })
  }

  /** `Allow` for `path` (`GET, HEAD, POST`), or null when no route serves it. */
  allow(path: string): string | null {
    const methods = new Set<string>()
    for (const e of this.entries) if (e.matches(path) !== false) for (const m of e.methods) methods.add(m)
    return methods.size ? [...methods].sort().join(', ') : null
  }
}

/**
 * An express router answers OPTIONS by itself when none of its routes does (200 `text/plain`
 * listing the methods), so the request never reached the JSON 405 of the API. This hands OPTIONS
 * past the router to the answer every other method a path does not serve gets.
 */
export const withoutAutoOptions =
  (router: Router): RequestHandler =>
  (req, res, next) => {
    if (req.method === 'OPTIONS') next()
    else router(req, res, next)
  }
