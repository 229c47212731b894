import type { Db } from '@mailer/db'
import type { ProjectDomains } from '../domain/recipients.js'

/**
 * Each project's sending domains (name → verification) in memory, so the accept path does not
 * read `domains` on every request. The domains routes publish `domains.invalidate` after any
 * change; the TTL only bounds how long a lost invalidation can leave an entry stale.
 */
export class DomainCache {
  private readonly entries = new Map<string, { domains: ProjectDomains; expiresAt: number }>()
  private readonly loading = new Map<string, Promise<ProjectDomains>>()
  // Bumped by every invalidation, so a load that started before one is not cached after it.
  private readonly generation = new Map<string, number>()

  constructor(
    private readonly db: Db,
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  async get(projectId: string): Promise<ProjectDomains> {
    const hit = this.entries.get(projectId)
    if (hit && hit.expiresAt > Date.now()) return hit.domains
    const inflight = this.loading.get(projectId)
    if (inflight) return inflight
    const gen = this.generation.get(projectId) ?? 0
    const load = this.load(projectId)
      .then((domains) => {
        if ((this.generation.get(projectId) ?? 0) === gen) this.remember(projectId, domains)
        return domains
      })
      .finally(() => {
        if (this.loading.get(projectId) === load) this.loading.delete(projectId)
      })
    this.loading.set(projectId, load)
    return load
  }

  invalidate(projectId: string): void {
    this.generation.set(projectId, (this.generation.get(projectId) ?? 0) + 1)
    this.entries.delete(projectId)
    this.loading.delete(projectId)
  }

  /** Every project, loads in flight included (after a reconnect: invalidations sent meanwhile never arrived). */
  clear(): void {
    for (const id of new Set([...this.entries.keys(), ...this.loading.keys()])) this.invalidate(id)
  }

  private async load(projectId: string): Promise<ProjectDomains> {
    const rows = await this.db.domain.findMany({
      where: { projectId },
      select: { name: true, verification: true },
    })
    return new Map(rows.map((r) => [r.name.toLowerCase(), r.verification]))
  }

  private remember(projectId: string, domains: ProjectDomains): void {
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value
      if (oldest !== undefined) this.entries.delete(oldest)
    }
    this.entries.set(projectId, { domains, expiresAt: Date.now() + this.ttlMs })
  }
}
