import type { DimensionDelta } from './aggregate.js'

/**
 * The value that counts a (project, day, kind)'s values past the cap. It cannot be a real value:
 * a tag is always `key:value` (a colon), and a domain holds no parentheses. Reports leave it out.
 */
export const OTHER_VALUE = '(other)'

/** Default most distinct values kept per (project, UTC day, kind): `ANALYTICS_MAX_DIMENSION_VALUES`. */
export const DEFAULT_MAX_DIMENSION_VALUES = 1000

/** What `analytics_dimensions` already holds for a batch's (project, day, kind) groups. */
export interface StoredDimensions {
  /** Distinct values stored per `groupKey` (the overflow row left out), counted up to the cap. */
  distinct: ReadonlyMap<string, number>
  /** `rowKey`s of the batch's values that already have a row. */
  present: ReadonlySet<string>
}

type GroupOf = Pick<DimensionDelta, 'projectId' | 'day' | 'kind'>
export const groupKey = (d: GroupOf): string => `${d.projectId}\u0000${d.day}\u0000${d.kind}`
/** Same key (and order) as the one `aggregate` sorts dimension rows by. */
export const rowKey = (d: GroupOf & { value: string }): string => `${groupKey(d)}\u0000${d.value}`

/**
 * Bounds the distinct values of each (project, day, kind) to `max`: a value that already has a
 * row keeps counting there; new values take the room left, the most counted in this batch first
 * (ties by value), so a tag on every email wins over a per-email id; the rest add to one
 * `OTHER_VALUE` row. Counts are never lost, only pooled. Returns rows sorted by primary key, as
 * `aggregate` does, so concurrent writers still lock them in the same order.
 */
export function capDimensions(
  rows: DimensionDelta[],
  stored: StoredDimensions,
  max: number,
): DimensionDelta[] {
  const groups = new Map<string, DimensionDelta[]>()
  for (const r of rows) {
    const g = groupKey(r)
    const list = groups.get(g)
    if (list) list.push(r)
    else groups.set(g, [r])
  }
  const out = new Map<string, DimensionDelta>()
  const add = (r: DimensionDelta) => {
    const k = rowKey(r)
    const row = out.get(k)
    if (row) row.count += r.count
    else out.set(k, { ...r })
  }
  for (const [g, list] of groups) {
    const fresh: DimensionDelta[] = []
    for (const r of list) {
      if (r.value === OTHER_VALUE || stored.present.has(rowKey(r))) add(r)
      else fresh.push(r)
    }
    fresh.sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
    const room = Math.max(0, max - (stored.distinct.get(g) ?? 0))
    fresh.forEach((r, i) => {
      add(i < room ? r : { ...r, value: OTHER_VALUE })
    })
  }
  return [...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v)
}
