export interface RetryPolicy {
  /** Retries after the first attempt before the email is `failed`. */
  maxRetries: number
  baseSeconds: number
  maxSeconds: number
  /** Wait after a platform-limit answer ("retried an hour later"). */
  platformLimitSeconds: number
}

/**
 * Wait before retry number `retry` (1 for the first retry): min(2^(retry-1) × base, max),
 * then a random 80-100 % of it so that emails deferred together (a relay outage) do not all come
 * back in the same second. Never later than the schedule says.
 */
export function backoffSeconds(
  retry: number,
  policy: Pick<RetryPolicy, 'baseSeconds' | 'maxSeconds'>,
  random = Math.random,
): number {
  const n = Math.max(0, retry - 1)
  const raw = Math.min(policy.maxSeconds, policy.baseSeconds * 2 ** Math.min(n, 52))
  return raw * (0.8 + 0.2 * random())
}

/**
 * `attempts` counts every attempt made so far, this one included (the claim increments it), so
 * `attempts - 1` retries are used up. Another retry is allowed while fewer than `maxRetries` are.
 */
export const retriesLeft = (attempts: number, policy: Pick<RetryPolicy, 'maxRetries'>): boolean =>
  attempts - 1 < policy.maxRetries
