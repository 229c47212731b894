import { Resolver } from 'node:dns/promises'
import type { TxtLookup } from '../domain/dns-records.js'

// Answers that prove there is no TXT record at the name (NXDOMAIN, or the name has other types only).
const ABSENT = new Set(['ENODATA', 'ENOTFOUND'])

/**
 * TXT lookups through the configured servers (or the system's). c-ares keeps no cache, so a
 * re-check sees records published a moment ago, subject only to the servers' own caching.
 */
export class TxtResolver {
  private readonly resolver: Resolver

  constructor(servers: string[], timeoutMs: number) {
    // Two tries bound a lookup to about 2 × timeout, well inside the gateway's upstream timeout.
    this.resolver = new Resolver({ timeout: timeoutMs, tries: 2 })
    if (servers.length > 0) this.resolver.setServers(servers)
  }

  async lookup(name: string): Promise<TxtLookup> {
    try {
      const records = await this.resolver.resolveTxt(name)
      // A long record (a 2048-bit DKIM key) arrives as several strings: one record, joined.
      return { kind: 'found', txts: records.map((chunks) => chunks.join('')) }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? ''
      return ABSENT.has(code) ? { kind: 'missing' } : { kind: 'error', code: code || 'EUNKNOWN' }
    }
  }
}
