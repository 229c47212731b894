import type { Request } from 'express'

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

export const isSafeMethod = (method: string): boolean => SAFE_METHODS.has(method.toUpperCase())

/** `scheme://host[:port]` → `host[:port]` in lower case; null when it is not an http(s) origin. */
export function originHost(origin: string): string | null {
  try {
    const u = new URL(origin)
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null
    return u.host.toLowerCase()
  } catch {
    return null
  }
}

/**
 * Whether a state-changing request comes from a page of this very site. Browsers send `Origin` on
 * every cross-origin and on every non-GET fetch; without it the `Referer` is used; a request with
 * neither is refused (the dashboard API is for browsers). The expected host is the one the browser
 * used: `X-Forwarded-Host` behind an ingress when proxies are trusted, else `Host`. `allowed` lists
 * extra origins for an ingress that rewrites the host without forwarding it.
 */
export function sameOrigin(req: Request, allowed: readonly string[] = []): boolean {
  const site = req.get('sec-fetch-site')
  if (site && site !== 'same-origin') return false
  const source = req.get('origin') ?? req.get('referer')
  if (!source || source === 'null') return false
  const host = originHost(source)
  if (!host) return false
  // Express derives `host` from X-Forwarded-Host only when `trust proxy` is on.
  const expected = (req.host ?? req.get('host') ?? '').toLowerCase()
  if (host === expected) return true
  return allowed.some((a) => originHost(a) === host)
}
