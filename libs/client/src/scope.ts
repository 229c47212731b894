import { ENDPOINTS, fillPath, KEYED_OPERATIONS, type Operation, pathSegment } from './endpoints.js'
import type { CallInit, HttpTransport, RequestOptions } from './transport.js'

/**
 * Sends an operation of the endpoint table. With `mirrorSlug`, project operations go to the
 * admin mirror of that project (`/v1/emails` → `/v1/admin/projects/<slug>/emails`).
 */
export class Scope {
  constructor(
    readonly transport: HttpTransport,
    readonly mirrorSlug?: string,
  ) {}

  path(op: Operation, params?: Record<string, string>): string {
    const path = fillPath(ENDPOINTS[op][1], params)
    if (this.mirrorSlug === undefined || op.startsWith('admin.')) return path
    return `/v1/admin/projects/${pathSegment('slug', this.mirrorSlug)}${path.slice('/v1'.length)}`
  }

  call<T>(op: Operation, params?: Record<string, string>, init?: CallInit): Promise<T> {
    const keyed = KEYED_OPERATIONS.includes(op)
    return this.transport.request<T>(ENDPOINTS[op][0], this.path(op, params), { ...init, keyed })
  }
}

/**
 * Walks a paginated list, page after page, yielding items newest first. `opts` goes with every
 * page request, so its `signal` also aborts the one in flight; an abort is checked as well
 * before each page and each item, so that an iteration stops at once, with the signal's reason
 * (as every call rejects on abort), and never asks for another page.
 */
export async function* paginate<T, Q extends { cursor?: string }>(
  list: (query: Q, opts?: RequestOptions) => Promise<{ data: T[]; nextCursor: string | null }>,
  query: Q,
  opts: RequestOptions = {},
): AsyncGenerator<T> {
  const { signal } = opts
  let q = query
  for (;;) {
    signal?.throwIfAborted()
    const page = await list(q, opts)
    for (const item of page.data) {
      signal?.throwIfAborted()
      yield item
    }
    if (!page.nextCursor) return
    q = { ...q, cursor: page.nextCursor }
  }
}
