/**
 * A broadcast's progress from its `counts` (email status → count): plain functions (no React) so
 * the words the page shows can be tested on their own.
 */
import { formatCount } from './format.js'

// `test`: a test key's broadcast makes test emails, never delivered by design and never changing
// status; they are done once made. Counted as neither, a finished test broadcast of 500 read
// "0 sent, 500 in progress".
const DONE = ['delivered', 'sent', 'test']
const FAILED = ['bounced', 'complained', 'rejected', 'failed', 'canceled']

export interface Progress {
  /** Emails made so far, whatever their status. */
  made: number
  done: number
  /** Of `done`, the test emails (nothing delivered). */
  test: number
  failed: number
  /** Made and not yet done or failed (queued, retrying, …). */
  waiting: number
}

export function progressOf(counts: Record<string, number>): Progress {
  const sum = (keys: string[]) => keys.reduce((n, k) => n + (counts[k] ?? 0), 0)
  const made = Object.values(counts).reduce((a, b) => a + b, 0)
  const done = sum(DONE)
  const failed = sum(FAILED)
  return { made, done, test: counts.test ?? 0, failed, waiting: made - done - failed }
}

/** "950 sent, 40 in progress, 10 failed or skipped of 1,000 contacts"; test emails say so. */
export function progressText(p: Progress, target?: number): string {
  const sent = `${formatCount(p.done)} sent${p.test > 0 ? ' (test emails, not delivered)' : ''}`
  const of = target ? ` of ${formatCount(target)} contacts` : ''
  return `${sent}, ${formatCount(p.waiting)} in progress, ${formatCount(p.failed)} failed or skipped${of}`
}
