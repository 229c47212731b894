import type { Db } from '@mailer/db'
import type { Logger } from '@mailer/observability'

const MINUTE = 60_000

/**
 * `lastUsedAt` is written at most once a minute per key (interface.md part 2), in one
 * multi-row UPDATE every few seconds, never on the request path. Each replica skips the keys it
 * wrote within the minute, and the UPDATE skips those any replica wrote within it: a replica
 * whose cache was filled before another replica's write knows only the older time, and wrote
 * again seconds later.
 */
export class LastUsedTracker {
  private readonly written = new Map<string, number>()
  private pending = new Map<string, Date>()
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly flushEveryMs = 5_000,
  ) {}

  /** Remembers what the database already holds, so a fresh cache entry doesn't rewrite it. */
  seen(keyId: string, lastUsedAt: Date | null): void {
    if (lastUsedAt && !this.written.has(keyId)) this.written.set(keyId, lastUsedAt.getTime())
  }

  touch(keyId: string, now = new Date()): void {
    const last = this.written.get(keyId) ?? 0
    if (now.getTime() - last < MINUTE) return
    this.written.set(keyId, now.getTime())
    this.pending.set(keyId, now)
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.flushEveryMs)
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return
    const batch = this.pending
    this.pending = new Map()
    // In id order: replicas flushing the same keys at once then lock them in the same order, so
    // they wait for each other instead of deadlocking (each replica's map is in first-seen order).
    const ids = [...batch.keys()].sort()
    const times = ids.map((id) => batch.get(id)!.toISOString())
    try {
      await this.db.$executeRawUnsafe(
        `UPDATE api_keys AS k SET last_used_at = v.ts
         FROM unnest($1::text[], $2::timestamptz[]) AS v(id, ts)
         WHERE k.id = v.id AND (k.last_used_at IS NULL OR k.last_used_at <= v.ts - interval '1 minute')`,
        ids,
        times,
      )
    } catch (err) {
      this.logger.warn({ err }, 'could not record lastUsedAt; will retry')
      for (const [k, v] of batch) if (!this.pending.has(k)) this.pending.set(k, v)
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    await this.flush()
  }
}
