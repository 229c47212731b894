import { useCallback, useEffect, useRef, useState } from 'react'

export interface Resource<T> {
  data: T | undefined
  error: Error | undefined
  /** True until the first answer (later refreshes keep showing the old data). */
  loading: boolean
  reload: () => void
}

/**
 * Calls `tick` every `ms` while the tab is visible, but never while the read it started last is
 * still running (`busy`), so that a list whose read takes longer than its poll interval (a filter
 * on a large project) is not asked again and again, its reads piling up on the database.
 */
export function usePoll(tick: () => void, busy: () => boolean, ms: number | undefined): void {
  const tickRef = useRef(tick)
  tickRef.current = tick
  const busyRef = useRef(busy)
  busyRef.current = busy
  useEffect(() => {
    if (!ms) return
    const t = window.setInterval(() => {
      if (document.visibilityState === 'visible' && !busyRef.current()) tickRef.current()
    }, ms)
    return () => window.clearInterval(t)
  }, [ms])
}

/**
 * Loads `load()` when `deps` change, and again every `pollMs` while the tab is visible (not while
 * a read is still running: usePoll). Answers that arrive after a newer request started are
 * dropped, so a slow old answer never wins.
 */
export function useResource<T>(load: () => Promise<T>, deps: unknown[], pollMs?: number): Resource<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true })
  const seq = useRef(0)
  const running = useRef(0)
  const loadRef = useRef(load)
  loadRef.current = load

  /** A reload asked for while a read was running: made once that read has answered. */
  const reloadDue = useRef(false)

  const run = useCallback((initial: boolean) => {
    // A reload (an action done, the project list read again) while a read is unanswered waits for
    // it, then reads once more, so that against a slow server reads never pile one on another.
    if (!initial && running.current > 0) {
      reloadDue.current = true
      return
    }
    const n = ++seq.current
    if (initial) setState({ loading: true })
    running.current++
    loadRef
      .current()
      .then(
        (data) => {
          if (n === seq.current) setState({ data, loading: false })
        },
        (error: Error) => {
          if (n === seq.current)
            setState((s) => ({ ...(initial ? {} : { data: s.data }), error, loading: false }))
        },
      )
      .finally(() => {
        running.current--
        if (running.current === 0 && reloadDue.current) {
          reloadDue.current = false
          runRef.current(false)
        }
      })
  }, [])
  const runRef = useRef(run)

  useEffect(
    () => run(true),
    // biome-ignore lint/correctness/useExhaustiveDependencies: the caller's deps decide when to reload
    deps,
  )

  usePoll(
    () => run(false),
    () => running.current > 0,
    pollMs,
  )

  const reload = useCallback(() => run(false), [run])
  return { data: state.data, error: state.error, loading: state.loading, reload }
}

/** Runs an action, tracking busy state and the error it failed with (shown next to the form). */
export function useAction<A extends unknown[], R>(fn: (...args: A) => Promise<R>) {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<Error | undefined>()
  const run = async (...args: A): Promise<R | undefined> => {
    setBusy(true)
    setError(undefined)
    try {
      return await fn(...args)
    } catch (e) {
      setError(e as Error)
      return undefined
    } finally {
      setBusy(false)
    }
  }
  return { run, busy, error, clearError: () => setError(undefined) }
}

/**
 * Calls `reload` when `value` changes after the first render (a version saved, an action done,
 * the project list read again), so what a component shows follows something it does not load.
 */
export function useReloadOnChange(value: unknown, reload: () => void): void {
  const shownFor = useRef(value)
  useEffect(() => {
    if (value === shownFor.current) return
    shownFor.current = value
    reload()
  }, [value, reload])
}
