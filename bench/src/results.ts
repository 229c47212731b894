import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from './stack.js'

/**
 * Writes <dir>/<YYYY-MM-DD>.md (then -2, -3, … for later runs the same day): bench/results for a
 * full run, .data/bench-results (not committed) for partial or shortened ones.
 */
export function writeResults(text: string, at: Date, full: boolean): string {
  const dir = full ? join(ROOT, 'bench', 'results') : join(ROOT, '.data', 'bench-results')
  mkdirSync(dir, { recursive: true })
  const day = at.toISOString().slice(0, 10)
  let path = join(dir, `${day}.md`)
  for (let i = 2; existsSync(path); i++) path = join(dir, `${day}-${i}.md`)
  writeFileSync(path, text)
  return path
}
