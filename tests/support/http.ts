import { ADMIN_KEY } from './stack.js'

export interface ApiResponse<T = any> {
  status: number
  headers: Headers
  body: T
}

/**
 * A thin fetch wrapper for tests: JSON in, JSON out, status and headers kept. `baseUrl` may be a
 * function, read at each call: a client made before the gateway listens (see `useStack`).
 */
export function api(baseUrl: string | (() => string)) {
  const call = async <T = any>(
    method: string,
    path: string,
    opts: { key?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { ...opts.headers }
    if (opts.key) headers.authorization = `Bearer ${opts.key}`
    let body: string | undefined
    if (opts.rawBody !== undefined) body = opts.rawBody
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body)
      headers['content-type'] = 'application/json'
    }
    const base = typeof baseUrl === 'function' ? baseUrl() : baseUrl
    const res = await fetch(base + path, { method, headers, ...(body !== undefined ? { body } : {}) })
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = text ? JSON.parse(text) : undefined
    } catch {
      /* keep text */
    }
    return { status: res.status, headers: res.headers, body: parsed as T }
  }
  return {
    call,
    get: <T = any>(path: string, key?: string | null, headers?: Record<string, string>) =>
      call<T>('GET', path, { key: key ?? null, ...(headers ? { headers } : {}) }),
    post: <T = any>(path: string, key: string | null, body?: unknown, headers?: Record<string, string>) =>
      call<T>('POST', path, { key, body, ...(headers ? { headers } : {}) }),
    patch: <T = any>(path: string, key: string | null, body?: unknown) =>
      call<T>('PATCH', path, { key, body }),
    del: <T = any>(path: string, key: string | null) => call<T>('DELETE', path, { key }),
    admin: ADMIN_KEY,
  }
}

/** Creates a project and one key of each mode through the admin API. */
export async function createProject(
  client: ReturnType<typeof api>,
  slug: string,
  extra: Record<string, unknown> = {},
): Promise<{ project: any; live: string; test: string; liveId: string; testId: string }> {
  const p = await client.post('/v1/admin/projects', client.admin, { slug, name: `Project ${slug}`, ...extra })
  if (p.status !== 201) throw new Error(`create project: ${p.status} ${JSON.stringify(p.body)}`)
  const live = await client.post(`/v1/admin/projects/${slug}/api-keys`, client.admin, {
    name: 'live key',
    mode: 'live',
  })
  const test = await client.post(`/v1/admin/projects/${slug}/api-keys`, client.admin, {
    name: 'test key',
    mode: 'test',
  })
  return {
    project: p.body,
    live: live.body.key,
    test: test.body.key,
    liveId: live.body.id,
    testId: test.body.id,
  }
}
