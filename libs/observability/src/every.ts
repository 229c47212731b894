import type { Logger } from './logger.js'

export interface Loop {
  stop(): Promise<void>
}

/**
 * Runs `fn` every `ms` (first one interval after the call, or at once with `now`: a pass a
 * service needs at start is the loop's own, so it never overlaps the next), never two runs at
 * once (a slow run delays the next rather than stacking); a failed run is logged and the next one
 * tries again. `stop` waits for a run in progress, so shutdown never cuts a transaction short.
 * The timer alone does not keep the process alive.
 */
export function every(
  ms: number,
  name: string,
  logger: Logger,
  fn: () => Promise<void>,
  opts: { now?: boolean } = {},
): Loop {
  let running: Promise<void> | null = null
  let stopped = false
  const run = () => {
    if (running || stopped) return
    running = fn()
      .catch((err) => logger.warn({ err, loop: name }, 'background run failed; will retry'))
      .finally(() => {
        running = null
      })
  }
  const timer = setInterval(run, ms)
  timer.unref()
  if (opts.now) run()
  return {
    async stop() {
      stopped = true
      clearInterval(timer)
      await running
    },
  }
}
