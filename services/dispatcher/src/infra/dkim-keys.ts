import { createPrivateKey, type KeyObject } from 'node:crypto'
import type { Db } from '@mailer/db'
import type { DkimKey } from '../domain/dkim-sign.js'

interface Entry {
  key: Promise<DkimKey | null>
  expiresAt: number
}

/**
 * Signing keys by project and sending domain, from the `domains` table, kept in memory so a
 * burst of emails from one domain costs one query. Dropped when the email service announces a
 * change of the project's domains (`domains.invalidate`), and after `ttlMs` in case that
 * announcement was lost.
 */
export class DkimKeys {
  private readonly entries = new Map<string, Entry>()

  constructor(
    private readonly db: Db,
    private readonly ttlMs = 60_000,
  ) {}

  get(projectId: string, domain: string): Promise<DkimKey | null> {
    const id = `${projectId}\u0000${domain}`
    const hit = this.entries.get(id)
    if (hit && hit.expiresAt > Date.now()) return hit.key
    const key = this.load(projectId, domain)
    this.entries.set(id, { key, expiresAt: Date.now() + this.ttlMs })
    // A failed lookup is not cached: the next email asks again.
    key.catch(() => this.entries.delete(id))
    return key
  }

  invalidate(projectId: string): void {
    for (const id of this.entries.keys()) if (id.startsWith(`${projectId}\u0000`)) this.entries.delete(id)
  }

  /** Every domain (after a reconnect: invalidations sent meanwhile never arrived). */
  clear(): void {
    this.entries.clear()
  }

  private async load(projectId: string, domain: string): Promise<DkimKey | null> {
    const row = await this.db.domain.findUnique({
      where: { projectId_name: { projectId, name: domain } },
      select: { name: true, dkimSelector: true, dkimPrivateKey: true },
    })
    const privateKey = row ? parsedKey(row.dkimPrivateKey) : null
    return row && privateKey ? { domainName: row.name, keySelector: row.dkimSelector, privateKey } : null
  }
}

/**
 * Parsed once here, not by every signature (see DkimKey). A key that does not parse counts as no
 * key: the domain's messages go unsigned (with a warning) rather than not at all.
 */
function parsedKey(pem: string): KeyObject | null {
  try {
    return createPrivateKey(pem)
  } catch {
    return null
  }
}
