/** Human tables by default; `--json` prints the API's answer as it is, for scripts. */

export type Column<T> = [header: string, value: (row: T) => unknown]

const cell = (v: unknown): string => {
  if (v === null || v === undefined) return '-'
  if (Array.isArray(v)) return v.join(', ')
  if (typeof v === 'object') return JSON.stringify(v)
  return String(v)
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
    process.stdout.write(`${this.json ? JSON.stringify(value, null, 2) : human()}\n`)
  }

  /** One line per item, as it comes (tail): NDJSON with --json. */
  line(value: unknown, human: string): void {
    process.stdout.write(`${this.json ? JSON.stringify(value) : human}\n`)
  }
}
