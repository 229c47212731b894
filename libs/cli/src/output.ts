/** Human tables by default; `--json` prints the API's answer as it is, for scripts. */

export type Column<T> = [header: string, value: (row: T) => unknown]

// C0 controls, DEL and C1 controls (\u009b is a one-byte CSI to some terminals).
const CONTROL = /\p{Cc}/gu
const CONTROL_BUT_NEWLINE = /(?!\n)\p{Cc}/gu
const escapeChar = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`

/**
 * Shows control characters as `\u001b`. What the CLI prints comes from senders (a display name,
 * a text preview, tags) and from remote mail servers (SMTP responses): written raw, an escape
 * sequence in it would retitle, clear or rewrite the operator's terminal, or hide lines.
 */
export const visible = (text: string): string => text.replace(CONTROL, escapeChar)

/** The same for text of several lines that the CLI put together itself: its line breaks stay. */
export const visibleLines = (text: string): string => text.replace(CONTROL_BUT_NEWLINE, escapeChar)

const cell = (v: unknown): string => {
  if (v === null || v === undefined) return '-'
  if (Array.isArray(v)) return visible(v.join(', '))
  if (typeof v === 'object') return JSON.stringify(v)
  return visible(String(v))
}

export function table<T>(rows: T[], columns: Column<T>[]): string {
  const cells = rows.map((r) => columns.map(([, f]) => cell(f(r))))
  const widths = columns.map(([h], i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)))
  const line = (values: string[]) =>
    values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!))).join('  ')
  return [line(columns.map(([h]) => h.toUpperCase())), ...cells.map(line)].join('\n')
}

/** `key  value` lines for one object. */
export function record(obj: Record<string, unknown>, keys?: string[]): string {
  const entries = (keys ?? Object.keys(obj)).map((k) => [k, cell(obj[k])] as const)
  const w = Math.max(...entries.map(([k]) => k.length))
  return entries.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n')
}

export class Out {
  constructor(readonly json: boolean) {}

  /** Prints `value` as JSON, or as the human form `human` makes of it. */
  print(value: unknown, human: () => string): void {
    process.stdout.write(`${this.json ? JSON.stringify(value, null, 2) : visibleLines(human())}\n`)
  }

  /** One line per item, as it comes (tail): NDJSON with --json. */
  line(value: unknown, human: string): void {
    process.stdout.write(`${this.json ? JSON.stringify(value) : visible(human)}\n`)
  }
}
