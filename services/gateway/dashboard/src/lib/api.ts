import { ROOT_URL } from './router.js'
import type { SessionCheck } from './types.js'

/** An API error in the contract's shape (or `unexpected_response` for anything else). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param?: string,
    readonly requestId?: string,
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

export type Query = Record<string, string | number | boolean | undefined | null>

let csrfToken = ''
let onSignedOut: () => void = () => undefined

/** Called once signed in (and after a reload finds a session): the token writes must carry. */
export const setCsrfToken = (token: string) => {
  csrfToken = token
}
/** What to do when the session ends under us (expired, signed out in another tab). */
export const setSignedOutHandler = (fn: () => void) => {
  onSignedOut = fn
}

/** `v1/admin/projects` → `<dashboard root>/api/v1/admin/projects?…` (relative to the page). */
function apiUrl(path: string, query?: Query): URL {
  const url = new URL(`api/${path.replace(/^\/+/, '')}`, ROOT_URL)
  for (const [k, v] of Object.entries(query ?? {}))
    if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v))
  return url
}

/**
 * A sign-in in another tab (after a sign-out or an expiry there) replaces this browser's session
 * cookies, so the CSRF token this page holds no longer matches them and every write would be
 * refused with csrf_failed until a reload. The session route gives the token of the cookies the
 * browser has now; true when that is a different one.
 */
async function refreshCsrfToken(): Promise<boolean> {
  try {
    const state = await request<SessionCheck>('GET', 'session')
    const current = state.signedIn ? state.csrfToken : ''
    if (!current || current === csrfToken) return false
    csrfToken = current
    return true
  } catch {
    return false
  }
}

async function request<T>(
  method: string,
  path: string,
  opts: { query?: Query; body?: unknown } = {},
  retried = false,
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken
  if (opts.body !== undefined) headers['content-type'] = 'application/json'
  let res: Response
  try {
    res = await fetch(apiUrl(path, opts.query), {
      method,
      headers,
      credentials: 'same-origin',
      body: opts.body === undefined ? null : JSON.stringify(opts.body),
    })
  } catch {
    throw new ApiError(
      0,
      'connection_failed',
      'Could not reach the server. Check your connection and try again.',
    )
  }
  const text = await res.text()
  let parsed: unknown
  try {
    parsed = text ? JSON.parse(text) : undefined
  } catch {
    parsed = undefined
  }
  if (res.ok && (parsed !== undefined || !text)) return parsed as T
  const err = (parsed as { error?: { code?: unknown; message?: unknown; param?: unknown } } | undefined)
    ?.error
  const requestId = res.headers.get('x-request-id') ?? undefined
  if (err && typeof err.code === 'string') {
    // Refused before anything was done, so trying again once with the current token is safe.
    if (err.code === 'csrf_failed' && !retried && (await refreshCsrfToken()))
      return request<T>(method, path, opts, true)
    if (err.code === 'invalid_session' && !path.startsWith('session')) onSignedOut()
    const message = typeof err.message === 'string' ? err.message : err.code
    throw new ApiError(
      res.status,
      err.code,
      message,
      typeof err.param === 'string' ? err.param : undefined,
      requestId,
    )
  }
  throw new ApiError(
    res.status,
    'unexpected_response',
    `Unexpected ${res.status} answer from the server`,
    undefined,
    requestId,
  )
}

export const api = {
  get: <T>(path: string, query?: Query) => request<T>('GET', path, query ? { query } : {}),
  post: <T>(path: string, body?: unknown, query?: Query) =>
    request<T>('POST', path, { ...(body === undefined ? {} : { body }), ...(query ? { query } : {}) }),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, { body }),
  del: <T>(path: string, body?: unknown) => request<T>('DELETE', path, body === undefined ? {} : { body }),
}

const enc = encodeURIComponent

/** Admin API paths, as the gateway serves them under /dashboard/api. */
export const paths = {
  /** A project route through the admin mirror: `projects/acme` + `emails` → …/projects/acme/emails. */
  mirror: (slug: string, rest: string) => `v1/admin/projects/${enc(slug)}/${rest.replace(/^\/+/, '')}`,
  project: (slug: string) => `v1/admin/projects/${enc(slug)}`,
  /** An email through its project's admin mirror when the project is known, else the admin routes. */
  email: (id: string, project: string | null, rest = '') =>
    project
      ? `v1/admin/projects/${enc(project)}/emails/${enc(id)}${rest}`
      : `v1/admin/emails/${enc(id)}${rest}`,
  enc,
}
