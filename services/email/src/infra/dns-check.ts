import type { DnsRecord, DomainVerification } from '@mailer/contracts'
import type { Metrics } from '@mailer/observability'
import {
  applyLookup,
  buildRecords,
  carryStatuses,
  deriveVerification,
  recordKind,
  skipVerification,
} from '../domain/dns-records.js'
import type { DnsSettings } from './dns-env.js'
import { TxtResolver } from './dns-resolver.js'
import type { DomainRow } from './domain-store.js'

export interface CheckResult {
  verification: DomainVerification
  records: DnsRecord[]
  checkedAt: Date | null
}

/**
 * Verifies a domain's records: with `DOMAIN_VERIFICATION=skip` everything counts as verified and
 * nothing is looked up (`checkedAt` stays as it was); with `dns` the three names are queried in
 * parallel and each record gets the status its TXT answer supports.
 */
export class DomainVerifier {
  private readonly resolver: TxtResolver
  private readonly lookups

  constructor(
    private readonly settings: DnsSettings,
    metrics: Metrics,
  ) {
    this.resolver = new TxtResolver(settings.DNS_SERVERS, settings.DNS_TIMEOUT_MS)
    this.lookups = metrics.counter(
      'dns_lookups_total',
      'TXT lookups made to verify domains, by record and outcome',
      ['record', 'outcome'],
    )
  }

  get mode(): DnsSettings['DOMAIN_VERIFICATION'] {
    return this.settings.DOMAIN_VERIFICATION
  }

  /** The records the domain should publish now (values follow the current SPF setting). */
  records(row: Pick<DomainRow, 'name' | 'dkimSelector' | 'dkimPublicKey' | 'records'>): DnsRecord[] {
    const fresh = buildRecords(row.name, row.dkimSelector, row.dkimPublicKey, this.settings.SPF_INCLUDE)
    return carryStatuses(fresh, row.records)
  }

  async check(row: DomainRow, now: Date): Promise<CheckResult> {
    const records = this.records(row)
    if (this.mode === 'skip')
      return { verification: 'verified', records: skipVerification(records), checkedAt: row.checkedAt }
    const checked = await Promise.all(
      records.map(async (r) => {
        const found = await this.resolver.lookup(r.name)
        this.lookups.inc({ record: recordKind(r), outcome: found.kind })
        return applyLookup(r, found)
      }),
    )
    return {
      verification: deriveVerification(checked, row.verification, row.createdAt, now),
      records: checked,
      checkedAt: now,
    }
  }
}
