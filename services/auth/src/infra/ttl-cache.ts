/**
 * A small map with per-entry expiry and a size bound (oldest entries go first). Used for
 * verified keys and projects so that a request costs no database round trip.
 */
export class TtlCache<V> {
  private readonly map = new Map<string, { value: V; expiresAt: number }>()

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 50_000,
  ) {}

  get(key: string): V | undefined {
    const hit = this.map.get(key)
    if (!hit) return undefined
    if (hit.expiresAt <= Date.now()) {
      this.map.delete(key)
      return undefined
    }
    return hit.value
  }

  set(key: string, value: V, ttlMs = this.ttlMs): void {
    if (this.map.size >= this.maxEntries) {
      const oldest = this.map.keys().next().value
      if (oldest !== undefined) this.map.delete(oldest)
    }
    this.map.set(key, { value, expiresAt: Date.now() + ttlMs })
  }

  delete(key: string): void {
    this.map.delete(key)
  }

  /** Drops every entry whose value matches (e.g. all keys of a project). */
  deleteWhere(pred: (value: V) => boolean): void {
    for (const [k, v] of this.map) if (pred(v.value)) this.map.delete(k)
  }

  clear(): void {
    this.map.clear()
  }
}
