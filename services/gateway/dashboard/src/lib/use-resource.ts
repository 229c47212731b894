import { useCallback, useEffect, useRef, useState } from 'react'
import { poll } from './poll.js'

export interface Resource<T> {
  data: T | undefined
  error: Error | undefined
  /** True until the first answer (later refreshes keep showing the old data). */
  loading: boolean
  reload: () => void
}

/**
 * Loads `load()` when `deps` change, and again every `pollMs` while the tab is visible, a poll
 * starting only once no load is in flight (poll.ts). Answers that arrive after a newer request
 * started are dropped, so a slow old answer never wins.
 */
export function useResource<T>(load: () => Promise<T>, deps: unknown[], pollMs?: number): Resource<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true })
  const seq = useRef(0)
  const loadRef = useRef(load)
  loadRef.current = load

  /** The newest load while it runs: a poll waits for it rather than adding a request. */
  const inFlight = useRef<Promise<void> | null>(null)

  const run = useCallback((initial: boolean): Promise<void> => {
    const n = ++seq.current
    if (initial) setState({ loading: true })
    const p = loadRef.current().then(
      (data) => {
        if (n === seq.current) setState({ data, loading: false })
      },
      (error: Error) => {
        if (n === seq.current)
          setState((s) => ({ ...(initial ? {} : { data: s.data }), error, loading: false }))
      },
    )
    inFlight.current = p
    void p.finally(() => {
      if (inFlight.current === p) inFlight.current = null
    })
    return p
  }, [])

  useEffect(
    () => void run(true),
    // biome-ignore lint/correctness/useExhaustiveDependencies: the caller's deps decide when to reload
    deps,
  )

  useEffect(() => {
    if (!pollMs) return
    return poll(
      pollMs,
      () => inFlight.current ?? run(false),
      () => document.visibilityState === 'visible',
    )
  }, [pollMs, run])

  const reload = useCallback(() => void run(false), [run])
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
