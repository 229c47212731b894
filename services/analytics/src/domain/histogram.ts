/**
 * Delivery-time histogram on fixed log-spaced bounds, stored per bucket in
 * `analytics_buckets.delivery_hist` so that percentiles never need the raw emails.
 *
 * Ten slots per decade from 1 ms to 10^8 ms (about 28 hours): upper edges 10^(k/10) ms for
 * k = 0..80, so slot 0 holds [0, 1] ms, slot k holds (10^((k-1)/10), 10^(k/10)] ms and the last
 * slot (81) everything slower. Neighbouring edges differ by 26%, so an interpolated percentile is
 * within a few percent of the true one.
 *
 * The bounds are part of the stored data: NEVER change them. A different layout needs a new
 * column (and a migration that leaves the old one readable).
 */
export const SLOTS_PER_DECADE = 10
export const MAX_DECADES = 8
/** Upper edges in ms, ascending; `HIST_BOUNDS_MS[k]` closes slot k. */
export const HIST_BOUNDS_MS: readonly number[] = Array.from(
  { length: SLOTS_PER_DECADE * MAX_DECADES + 1 },
  (_, k) => 10 ** (k / SLOTS_PER_DECADE),
)
/** Slots stored: one per bound plus the overflow slot. */
export const HIST_SLOTS = HIST_BOUNDS_MS.length + 1

export type Histogram = number[]

export const emptyHistogram = (): Histogram => new Array<number>(HIST_SLOTS).fill(0)

/** The slot a delivery time falls in (negative and non-finite times are not recorded). */
export function slotOf(ms: number): number {
  if (ms <= 1) return 0
  // log10 gives a first guess; the loop corrects floating-point edge cases exactly.
  let k = Math.min(HIST_SLOTS - 1, Math.ceil(Math.log10(ms) * SLOTS_PER_DECADE))
  while (k > 0 && ms <= HIST_BOUNDS_MS[k - 1]!) k--
  while (k < HIST_BOUNDS_MS.length && ms > HIST_BOUNDS_MS[k]!) k++
  return k
}

export const isRecordable = (ms: unknown): ms is number =>
  typeof ms === 'number' && Number.isFinite(ms) && ms >= 0

export function record(hist: Histogram, ms: number): void {
  const slot = slotOf(ms)
  hist[slot] = (hist[slot] ?? 0) + 1
}

/** Adds `b` into `a` slot by slot (missing slots count as zero). */
export function addInto(a: Histogram, b: readonly (number | null)[]): Histogram {
  for (let i = 0; i < b.length; i++) a[i] = (a[i] ?? 0) + (b[i] ?? 0)
  return a
}

export const histogramOf = (values: number[]): Histogram => {
  const h = emptyHistogram()
  for (const v of values) if (isRecordable(v)) record(h, v)
  return h
}

/** Lower and upper edge of a slot in ms (the overflow slot has no upper edge). */
export function slotRange(slot: number): [number, number] {
  const lo = slot === 0 ? 0 : HIST_BOUNDS_MS[slot - 1]!
  const hi = slot < HIST_BOUNDS_MS.length ? HIST_BOUNDS_MS[slot]! : Number.POSITIVE_INFINITY
  return [lo, hi]
}

/**
 * The q-quantile (0 < q ≤ 1) in whole ms, interpolated linearly inside the slot that holds the
 * rank q × count (Prometheus' histogram_quantile method); `null` for an empty histogram. A rank in
 * the overflow slot answers that slot's lower edge, as nothing more is known.
 */
export function quantile(hist: readonly (number | null)[], q: number): number | null {
  const total = hist.reduce<number>((s, c) => s + (c ?? 0), 0)
  if (total === 0) return null
  const rank = q * total
  let cum = 0
  for (let slot = 0; slot < hist.length; slot++) {
    const c = hist[slot] ?? 0
    if (c === 0) continue
    if (cum + c >= rank) {
      const [lo, hi] = slotRange(slot)
      if (!Number.isFinite(hi)) return Math.round(lo)
      return Math.round(lo + ((hi - lo) * (rank - cum)) / c)
    }
    cum += c
  }
  return Math.round(slotRange(hist.length - 1)[0])
}
