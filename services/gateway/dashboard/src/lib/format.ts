/** Display helpers. Everything returns plain strings: React escapes them when rendering. */

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' })

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—'
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? iso : dateTime.format(d)
}

/** "3 min ago", "in 2 h"; falls back to the date beyond a week. */
export function relative(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—'
  const t = new Date(iso).getTime()
  if (Number.isNaN(t)) return iso
  const s = Math.round((t - now) / 1000)
  const a = Math.abs(s)
  const fmt = (n: number, unit: string) => (s < 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`)
  if (a < 45) return s < 0 ? 'just now' : 'in a moment'
  if (a < 3600) return fmt(Math.round(a / 60), 'min')
  if (a < 86_400) return fmt(Math.round(a / 3600), 'h')
  if (a < 7 * 86_400) return fmt(Math.round(a / 86_400), 'd')
  return formatDate(iso)
}

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—'
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`
  if (ms < 3_600_000) return `${(ms / 60_000).toFixed(1)} min`
  return `${(ms / 3_600_000).toFixed(1)} h`
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`
  return `${(n / 1024 / 1024).toFixed(1)} MiB`
}

export const formatRate = (r: number | null | undefined): string =>
  r === null || r === undefined ? '—' : `${(r * 100).toFixed(1)} %`

export const formatCount = (n: number): string => new Intl.NumberFormat().format(n)

/** A `<input type="datetime-local">` value (local time) → ISO 8601 with offset, or undefined. */
export function localToIso(value: string): string | undefined {
  if (!value) return undefined
  const d = new Date(value)
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString()
}

/** ISO → the value a `datetime-local` input shows (local time, minutes). */
export function isoToLocal(iso: string | null | undefined): string {
  if (!iso) return ''
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return ''
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`
}

/** A `<input type="date">` value → the ISO instant of that local midnight (`until`: the next one). */
export function dateToIso(value: string, endOfDay = false): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined
  const [y, m, d] = value.split('-').map(Number) as [number, number, number]
  return new Date(y, m - 1, endOfDay ? d + 1 : d).toISOString()
}

/** Pretty JSON for `<pre>` blocks; never throws. */
export function json(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? ''
  } catch {
    return String(value)
  }
}
