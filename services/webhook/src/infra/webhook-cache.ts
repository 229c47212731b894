import type { WebhookTarget } from '../domain/matching.js'

interface Entry {
  list: WebhookTarget[]
  expiresAt: number
}

/**
 * Each project's enabled webhooks in memory, so the fan-out does no database lookup per event.
 * Every change broadcasts an invalidation (handlers/invalidate.ts) that drops the project here at
 * once. A load that started before an invalidation is not stored (generation check), so a list read
 * just before a change can never outlive it; the TTL only bounds a lost invalidation.
 */
export class WebhookCache {
  private readonly entries = new Map<string, Entry>()
  private readonly loading = new Map<string, Promise<WebhookTarget[]>>()
  private readonly generation = new Map<string, number>()

  constructor(
    private readonly load: (projectId: string) => Promise<WebhookTarget[]>,
    private readonly ttlMs: number,
    private readonly maxProjects = 20_000,
  ) {}

  async forProject(projectId: string): Promise<WebhookTarget[]> {
    const hit = this.entries.get(projectId)
    if (hit && hit.expiresAt > Date.now()) return hit.list
    const inFlight = this.loading.get(projectId)
    if (inFlight) return inFlight
    const gen = this.generation.get(projectId) ?? 0
    const p = this.load(projectId).then(
      (list) => {
        if ((this.generation.get(projectId) ?? 0) === gen) {
          if (this.loading.get(projectId) === p) this.loading.delete(projectId)
          this.store(projectId, list)
        }
        return list
      },
      (err) => {
        if (this.loading.get(projectId) === p) this.loading.delete(projectId)
        throw err
      },
    )
    this.loading.set(projectId, p)
    return p
  }

  invalidate(projectId: string): void {
    this.entries.delete(projectId)
    this.loading.delete(projectId)
    this.generation.set(projectId, (this.generation.get(projectId) ?? 0) + 1)
  }

  clear(): void {
    for (const id of [...this.entries.keys(), ...this.loading.keys()]) this.invalidate(id)
  }

  private store(projectId: string, list: WebhookTarget[]): void {
    this.entries.delete(projectId)
    if (this.entries.size >= this.maxProjects) {
      const oldest = this.entries.keys().next().value
      if (oldest !== undefined) this.entries.delete(oldest)
    }
    this.entries.set(projectId, { list, expiresAt: Date.now() + this.ttlMs })
  }
}
