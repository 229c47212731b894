import type { AuthInvalidation, VerifyKeyResponse } from '@mailer/contracts'

const MAX_ENTRIES = 10_000

const expired = (v: VerifyKeyResponse, now: number) =>
  v.key.expiresAt !== null && Date.parse(v.key.expiresAt) <= now

/**
 * Project keys the auth service verified a moment ago, by key hash, so that most requests skip
 * the round trip to auth (the gateway's hottest path; bench/README.md). Correctness rests on the
 * auth service's invalidations, which reach this gateway before auth answers the change that
 * caused them (one NATS connection delivers in order): a revoke, a disabled project or a renamed
 * key holds on the next request. The TTL only bounds the damage of an invalidation lost while
 * NATS was reconnecting, and how stale `lastUsedAt` can get (auth sees a verify per TTL per key).
 * Expiry is checked here on every hit. Failures are never cached.
 *
 * Past its TTL an entry is kept for the stale grace (AUTH_STALE_GRACE_SECONDS), for `stale`: a
 * request whose verification nobody answered (auth down, restarting or not answering in time, not
 * auth answering an error) is served on it, so that an auth rollout or crash does not stop sending
 * for keys known a moment before. That is sound because every revoke, project disable and key
 * rename goes through the auth service, which is down: nothing can have been revoked meanwhile.
 * What does arrive still holds: an invalidation deletes stale entries too, a NATS reconnect (after
 * which invalidations may have been missed) clears everything, and expiry is checked on every use.
 * With the gateway's own connection down, the request it would forward fails anyway.
 */
export class VerifiedKeys {
  private readonly map = new Map<string, { value: VerifyKeyResponse; until: number }>()
  /**
   * Bumped by every invalidation. An answer to a verification that was in flight when one
   * arrived may predate the change (a revoke), so it is used for its request but not kept:
   * kept, it would have served a revoked key for the rest of the TTL.
   */
  generation = 0

  constructor(
    private readonly ttlMs: number,
    private readonly staleGraceMs = 0,
  ) {}

  get(keyHash: string, now = Date.now()): VerifyKeyResponse | undefined {
    const hit = this.map.get(keyHash)
    if (!hit) return undefined
    if (hit.until <= now) {
      // Kept through the grace for `stale`; only a request auth does not answer may use it.
      if (hit.until + this.staleGraceMs <= now) this.map.delete(keyHash)
      return undefined
    }
    if (expired(hit.value, now)) {
      this.map.delete(keyHash)
      return undefined
    }
    return hit.value
  }

  /**
   * The key as verified before, past its TTL but within the grace, for a request whose
   * verification no auth replica answered (never one auth refused). Undefined past the grace, past
   * the key's `expiresAt`, or once an invalidation or a reconnect dropped it.
   */
  stale(keyHash: string, now = Date.now()): VerifyKeyResponse | undefined {
    const hit = this.map.get(keyHash)
    if (!hit) return undefined
    if (hit.until + this.staleGraceMs <= now || expired(hit.value, now)) {
      this.map.delete(keyHash)
      return undefined
    }
    return hit.value
  }

  /** Keeps `value` unless an invalidation came since `seen` (the generation its request saw). */
  set(keyHash: string, value: VerifyKeyResponse, seen = this.generation, now = Date.now()): void {
    if (this.ttlMs <= 0 || seen !== this.generation) return
    // Re-inserted at the end, so that the cap drops the key verified longest ago, not a busy one.
    this.map.delete(keyHash)
    if (this.map.size >= MAX_ENTRIES) {
      const oldest = this.map.keys().next().value
      if (oldest !== undefined) this.map.delete(oldest)
    }
    this.map.set(keyHash, { value, until: now + this.ttlMs })
  }

  /** Forgets a key auth refused: its verdict overrides what was kept (for `stale` too). */
  forget(keyHash: string): void {
    this.map.delete(keyHash)
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
