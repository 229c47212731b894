import type { AuthInvalidation, VerifyKeyResponse } from '@mailer/contracts'

const MAX_ENTRIES = 10_000

/**
 * Project keys the auth service verified a moment ago, by key hash, so that most requests skip
 * the round trip to auth (the gateway's hottest path; bench/README.md). Correctness rests on the
 * auth service's invalidations, which reach this gateway before auth answers the change that
 * caused them (one NATS connection delivers in order): a revoke, a disabled project or a renamed
 * key holds on the next request. The TTL only bounds the damage of an invalidation lost while
 * NATS was reconnecting, and how stale `lastUsedAt` can get (auth sees a verify per TTL per key).
 * Expiry is checked here on every hit. Failures are never cached.
 */
export class VerifiedKeys {
  private readonly map = new Map<string, { value: VerifyKeyResponse; until: number }>()
  /**
   * Bumped by every invalidation. An answer to a verification that was in flight when one
   * arrived may predate the change (a revoke), so it is used for its request but not kept:
   * kept, it would have served a revoked key for the rest of the TTL.
   */
  generation = 0

  constructor(private readonly ttlMs: number) {}

  get(keyHash: string, now = Date.now()): VerifyKeyResponse | undefined {
    const hit = this.map.get(keyHash)
    if (!hit) return undefined
    const expiresAt = hit.value.key.expiresAt
    if (hit.until <= now || (expiresAt !== null && Date.parse(expiresAt) <= now)) {
      this.map.delete(keyHash)
      return undefined
    }
    return hit.value
  }

  /** Keeps `value` unless an invalidation came since `seen` (the generation its request saw). */
  set(keyHash: string, value: VerifyKeyResponse, seen = this.generation, now = Date.now()): void {
    if (this.ttlMs <= 0 || seen !== this.generation) return
    if (this.map.size >= MAX_ENTRIES) {
      const oldest = this.map.keys().next().value
      if (oldest !== undefined) this.map.delete(oldest)
    }
    this.map.set(keyHash, { value, until: now + this.ttlMs })
  }

  /** Forgets every key (after a reconnect: invalidations sent meanwhile never arrived). */
  clear(): void {
    this.generation++
    this.map.clear()
  }

  apply(inv: AuthInvalidation): void {
    this.generation++
    for (const h of inv.keyHashes) this.map.delete(h)
    if (inv.projectIds.length === 0) return
    const ids = new Set(inv.projectIds)
    for (const [h, e] of this.map) if (ids.has(e.value.project.id)) this.map.delete(h)
  }
}
