import { useCallback, useEffect, useRef, useState } from 'react'
import { type Order, withFirstPage, withNextPage } from './live-list.js'
import type { DataList, Page } from './types.js'
import { type Resource, usePoll, useResource } from './use-resource.js'

export interface PagedList<T> extends Resource<Page<T>> {
  /** Reads one more page (the button shows while `data.nextCursor` is set). */
  loadMore: () => void
  loadingMore: boolean
}

/**
 * A cursor-paginated list read page after page with "Load more". Every read (a reload after an
 * action, a poll, a further page) walks the pages shown so far again from the first one in one go,
 * so rows are never shown twice or skipped when the list changed in between, and a row changed by
 * an action shows its new state wherever it is. `deps` changing (a new search) starts over at one
 * page.
 */
export function usePagedList<T>(
  load: (cursor: string | undefined) => Promise<Page<T>>,
  deps: unknown[],
  pollMs?: number,
): PagedList<T> {
  const pages = useRef(1)
  const lastDeps = useRef('')
  const [loadingMore, setLoadingMore] = useState(false)
  const list = useResource(
    async () => {
      const key = JSON.stringify(deps)
      if (key !== lastDeps.current) {
        lastDeps.current = key
        pages.current = 1
      }
      try {
        const data: T[] = []
        let cursor: string | undefined
        let nextCursor: string | null = null
        for (let i = 0; i < pages.current; i++) {
          const page = await load(cursor)
          data.push(...page.data)
          nextCursor = page.nextCursor
          if (!nextCursor) break
          cursor = nextCursor
        }
        return { data, nextCursor }
      } finally {
        setLoadingMore(false)
      }
    },
    deps,
    pollMs,
  )
  const loadMore = () => {
    if (!list.data?.nextCursor) return
    pages.current++
    setLoadingMore(true)
    list.reload()
  }
  return { ...list, loadMore, loadingMore }
}

/**
 * Every page of a list, read one after the other: for pickers (a `<select>`, check boxes), where
 * an operator must be able to choose any row, not only those of the first page.
 */
export function useAllPages<T>(
  load: (cursor: string | undefined) => Promise<Page<T>>,
  deps: unknown[],
): Resource<DataList<T>> {
  return useResource(async () => {
    const data: T[] = []
    let cursor: string | undefined
    do {
      const page = await load(cursor)
      data.push(...page.data)
      cursor = page.nextCursor ?? undefined
    } while (cursor)
    return { data }
  }, deps)
}

/**
 * A newest-first list whose first page is read again every `pollMs` (new rows and changes show up)
 * while "Load more" reads on from the last row shown; the pages after the first are not read again.
 * Each answer is merged into the rows shown at the time it lands (live-list.ts), so a refresh and
 * "Load more" can answer in either order without a row shown twice or skipped. The caller remounts
 * it (a `key`) for other filters.
 */
export function useLiveList<T extends { id: string }>(
  load: (cursor: string | undefined) => Promise<Page<T>>,
  order: Order<T>,
  pollMs: number,
): PagedList<T> {
  const [state, setState] = useState<{ data?: Page<T>; error?: Error; loading: boolean }>({ loading: true })
  const [loadingMore, setLoadingMore] = useState(false)
  const loadRef = useRef(load)
  loadRef.current = load
  const orderRef = useRef(order)
  orderRef.current = order
  const seq = useRef(0)
  const running = useRef(0)

  const refresh = useCallback(() => {
    // Only the newest first-page read counts: a slow older one never wins.
    const n = ++seq.current
    running.current++
    loadRef
      .current(undefined)
      .then(
        (first) => {
          if (n === seq.current)
            setState((s) => ({ data: withFirstPage(s.data, first, orderRef.current), loading: false }))
        },
        (error: Error) => {
          if (n === seq.current) setState((s) => ({ ...s, error, loading: false }))
        },
      )
      .finally(() => running.current--)
  }, [])

  useEffect(() => refresh(), [refresh])
  // Not while the last first-page read is still running (a slow filter would pile reads up).
  usePoll(refresh, () => running.current > 0, pollMs)

  const loadMore = () => {
    const cursor = state.data?.nextCursor
    if (!cursor || loadingMore) return
    setLoadingMore(true)
    loadRef
      .current(cursor)
      .then(
        (next) =>
          setState((s) => ({
            ...s,
            error: undefined,
            ...(s.data ? { data: withNextPage(s.data, next, orderRef.current) } : {}),
          })),
        (error: Error) => setState((s) => ({ ...s, error })),
      )
      .finally(() => setLoadingMore(false))
  }
  return {
    data: state.data,
    error: state.error,
    loading: state.loading,
    reload: refresh,
    loadMore,
    loadingMore,
  }
}
