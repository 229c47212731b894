import {
  type AuthInvalidation,
  type ResolveProjectResponse,
  SLUG_RE,
  type VerifyKeyResponse,
} from '@mailer/contracts'
import type { Db } from '@mailer/db'
import { toProjectRef } from '../domain/records.js'
import { TtlCache } from './ttl-cache.js'

export interface CachedKey {
  response: VerifyKeyResponse
  keyId: string
  projectId: string
  revokedAt: Date | null
  expiresAt: Date | null
  projectDisabled: boolean
  lastUsedAt: Date | null
}

const NEGATIVE_TTL_MS = 30_000

/**
 * Keys and projects as the hot path needs them, from memory when possible. Every change made
 * through the auth service broadcasts an invalidation (see handlers) that every replica applies
 * before its next request, so a revoke holds on the very next request; the TTL only bounds the
 * damage of an invalidation lost while NATS was reconnecting.
 */
export class KeyStore {
  private readonly keys: TtlCache<CachedKey | null>
  private readonly projects: TtlCache<ResolveProjectResponse>
  /**
   * Bumped by every invalidation: a row read before a change committed and cached after its
   * invalidation was applied would serve the old state (a revoked key as valid) for the TTL.
   */
  private generation = 0

  constructor(
    private readonly db: Db,
    ttlMs: number,
  ) {
    this.keys = new TtlCache(ttlMs)
    this.projects = new TtlCache(ttlMs)
  }

  /** The key with this hash, or null when none exists. */
  async byHash(hash: string): Promise<CachedKey | null> {
    const cached = this.keys.get(hash)
    if (cached !== undefined) return cached
    const seen = this.generation
    const row = await this.db.apiKey.findUnique({ where: { hash }, include: { project: true } })
    const keep = seen === this.generation
    if (!row) {
      // Unknown hashes are cached briefly so a flood of bad keys does not reach the database.
      if (keep) this.keys.set(hash, null, NEGATIVE_TTL_MS)
      return null
    }
    const entry: CachedKey = {
      keyId: row.id,
      projectId: row.projectId,
      revokedAt: row.revokedAt,
      expiresAt: row.expiresAt,
      projectDisabled: row.project.disabled,
      lastUsedAt: row.lastUsedAt,
      response: {
        project: toProjectRef(row.project),
        key: {
          id: row.id,
          name: row.name,
          mode: row.mode as 'live' | 'test',
          prefix: row.prefix,
          expiresAt: row.expiresAt ? row.expiresAt.toISOString() : null,
        },
      },
    }
    if (keep) this.keys.set(hash, entry)
    return entry
  }

  async projectBySlug(slug: string): Promise<ResolveProjectResponse | null> {
    // Only slugs a project can have are looked up: the admin mirror's path and RPC's `project`
    // are anyone's text, and PostgreSQL refuses some of it (a NUL, a lone surrogate) with an error.
    if (!SLUG_RE.test(slug)) return null
    const cached = this.projects.get(slug)
    if (cached) return cached
    const seen = this.generation
    const row = await this.db.project.findUnique({ where: { slug } })
    if (!row) return null
    const value = { ...toProjectRef(row), disabled: row.disabled }
    if (seen === this.generation) this.projects.set(slug, value)
    return value
  }

  /**
   * Forgets every key and project: after a reconnect, since invalidations broadcast while this
   * replica's connection was down never reached it (a key revoked meanwhile would otherwise stay
   * valid here for the rest of its TTL).
   */
  clear(): void {
    this.generation++
    this.keys.clear()
    this.projects.clear()
  }

  apply(inv: AuthInvalidation): void {
    this.generation++
    for (const h of inv.keyHashes) this.keys.delete(h)
    if (inv.projectIds.length) {
      const ids = new Set(inv.projectIds)
      this.keys.deleteWhere((k) => k !== null && ids.has(k.projectId))
      this.projects.deleteWhere((p) => ids.has(p.id))
    }
    for (const s of inv.slugs) this.projects.delete(s)
  }
}
