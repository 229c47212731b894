import { type AnchorHTMLAttributes, type MouseEvent, useEffect, useSyncExternalStore } from 'react'

/**
 * A small history router. Routes are written relative to the dashboard's root (`emails/:id`) and
 * resolved against `document.baseURI`, which the gateway sets with a relative `<base href>`, so
 * the app works under /dashboard/ and behind any ingress prefix without knowing either.
 */
const ROOT = new URL(document.baseURI).pathname
const rootPath = (): string => ROOT
/** The dashboard root as an absolute URL (for API calls), fixed at load like ROOT. */
export const ROOT_URL = new URL(document.baseURI).href

/** The current location relative to the dashboard root, e.g. `emails/email_01…`. */
export function currentPath(): string {
  const root = rootPath()
  const p = window.location.pathname
  return p.startsWith(root) ? decodeURI(p.slice(root.length)) : ''
}

/** An absolute path on this site for a dashboard-relative one (`emails?status=queued`). */
export const href = (to: string): string => rootPath() + to.replace(/^\/+/, '')

const listeners = new Set<() => void>()
const notify = () => {
  for (const l of listeners) l()
}
window.addEventListener('popstate', notify)

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  const url = href(to)
  if (opts.replace) window.history.replaceState(null, '', url)
  else window.history.pushState(null, '', url)
  notify()
  if (!opts.replace) window.scrollTo(0, 0)
}

const subscribe = (l: () => void) => {
  listeners.add(l)
  return () => listeners.delete(l)
}
const snapshot = () => window.location.pathname + window.location.search

/** Re-renders on navigation; returns the relative path and the query string. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const key = useSyncExternalStore(subscribe, snapshot)
  return {
    path: currentPath(),
    query: new URLSearchParams(key.includes('?') ? key.slice(key.indexOf('?')) : ''),
  }
}

/** Matches `projects/:slug/webhooks` against a path; params are decoded. */
export function matchRoute(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/').filter(Boolean)
  const got = path.split('/').filter(Boolean)
  if (want.length !== got.length) return null
  const params: Record<string, string> = {}
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!
    const g = got[i]!
    if (w.startsWith(':')) params[w.slice(1)] = decodeURIComponent(g)
    else if (w !== g) return null
  }
  return params
}

/** Builds `path?query`, leaving out empty values. */
export function withQuery(path: string, query: Record<string, string | undefined | null>): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) if (v) q.set(k, v)
  const s = q.toString()
  return s ? `${path}?${s}` : path
}

type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & { to: string }

/** A real link (open in new tab, copy address) that navigates in place on a plain click. */
export function Link({ to, onClick, ...rest }: LinkProps) {
  const click = (e: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(e)
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
    e.preventDefault()
    navigate(to)
  }
  return <a {...rest} href={href(to)} onClick={click} />
}

/** Sets the document title for the current page. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Mailer`
  }, [title])
}
