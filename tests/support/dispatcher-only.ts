import { afterAll, beforeAll } from 'vitest'
import { type UsedStack, useStack } from './use-stack.js'

/** The stand-in for the email service's due sweeper; a test may pause it and start it again. */
export interface RetrySweeper {
  stop(): void
  start(): void
}

/**
 * A dispatcher alone with the test's relay, for the dispatch tests that seed emails straight into
 * the database (`seed`) for `project`, whose sending domain `domain` is verified. `settings` are the
 * dispatcher's (shortened retries, the breaker's thresholds). With `retries`, the email service's
 * due sweeper, which re-publishes the dispatch messages of due retries, is stood in for from the
 * first test to the last (`sweeper`).
 */
export function useDispatcherOnly(
  project: string,
  domain: string,
  settings: Record<string, string>,
  opts: { retries?: boolean } = {},
): UsedStack & { sweeper: RetrySweeper } {
  const used = useStack([], {
    dispatcher: settings,
    seed: true,
    before: (s) => s.seed.domain(project, domain),
  })
  let running: { stop(): void } | undefined
  const sweeper: RetrySweeper = {
    stop: () => {
      running?.stop()
      running = undefined
    },
    start: () => {
      running ??= used.seed.startRetrySweeper()
    },
  }
  if (opts.retries) {
    beforeAll(() => sweeper.start())
    afterAll(() => sweeper.stop())
  }
  return Object.assign(used, { sweeper })
}
