/** How one attempt ended. `blocked`: the URL points at a private address (never retried). */
export type AttemptOutcome = 'success' | 'failure' | 'timeout' | 'blocked'

export type NextStep = { status: 'success' } | { status: 'failed' } | { status: 'pending'; delayMs: number }

/**
 * What follows attempt number `attemptsMade` (1 for the first). `schedule[n-1]` is the wait in
 * seconds after attempt n; once the schedule is used up the delivery is `failed`, so a delivery
 * gets at most `schedule.length + 1` attempts (contract.md part 4: 9 over about a day).
 */
export function nextStep(
  attemptsMade: number,
  outcome: AttemptOutcome,
  schedule: readonly number[],
): NextStep {
  if (outcome === 'success') return { status: 'success' }
  if (outcome === 'blocked') return { status: 'failed' }
  const wait = schedule[attemptsMade - 1]
  if (wait === undefined) return { status: 'failed' }
  return { status: 'pending', delayMs: Math.round(wait * 1000) }
}

/** Attempts a delivery can get before it is `failed`. */
export const maxAttempts = (schedule: readonly number[]): number => schedule.length + 1
