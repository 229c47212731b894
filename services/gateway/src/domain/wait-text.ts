/**
 * A wait as a person reads it in a message (a sign-in lockout's time left): seconds under a
 * minute, else whole minutes rounded up, so it never promises less than Retry-After says.
 */
export function waitText(seconds: number): string {
  if (seconds < 60) return `${Math.max(1, Math.ceil(seconds))} s`
  const minutes = Math.ceil(seconds / 60)
  return minutes === 1 ? '1 minute' : `${minutes} minutes`
}
