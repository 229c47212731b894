import type { DnsRecord, DomainVerification } from '@mailer/contracts'
import { dkimRecordName, dkimRecordValue, matchesDkim, parseDkimTags } from './dkim.js'

export type RecordKind = 'dkim' | 'spf' | 'dmarc'

export const DMARC_VALUE = 'v=DMARC1; p=none'

/**
 * The SPF record to ask for: `include:<spfInclude>` when the operator's relay publishes an SPF
 * record of its own, otherwise `a mx` (the relay is the domain's own mail host).
 */
export const spfValue = (spfInclude: string | undefined): string =>
  spfInclude ? `v=spf1 include:${spfInclude} ~all` : 'v=spf1 a mx ~all'

/** The three TXT records to publish, DKIM first; all `pending` until checked. */
export function buildRecords(
  domain: string,
  selector: string,
  publicKeyB64: string,
  spfInclude: string | undefined,
): DnsRecord[] {
  return [
    {
      type: 'TXT',
      name: dkimRecordName(selector, domain),
      value: dkimRecordValue(publicKeyB64),
      status: 'pending',
    },
    { type: 'TXT', name: domain, value: spfValue(spfInclude), status: 'pending' },
    { type: 'TXT', name: `_dmarc.${domain}`, value: DMARC_VALUE, status: 'pending' },
  ]
}

export function recordKind(r: Pick<DnsRecord, 'value'>): RecordKind {
  if (/^v=DKIM1/i.test(r.value)) return 'dkim'
  if (/^v=DMARC1/i.test(r.value)) return 'dmarc'
  return 'spf'
}

const SPF_PREFIX = /^v=spf1(\s|$)/i

/** Mechanisms the expected SPF record requires (qualifier `+` dropped, `all` terms ignored). */
function spfTerms(record: string): string[] {
  return record
    .trim()
    .split(/\s+/)
    .slice(1)
    .map((t) => t.toLowerCase().replace(/^\+/, ''))
    .filter((t) => !/^[~?-]?all$/.test(t))
}

/**
 * The domain's SPF record authorises us when there is exactly one `v=spf1` record (several are
 * a permanent error for receivers, RFC 7208 4.5) and it holds every mechanism we asked for.
 */
export function matchesSpf(txts: string[], expected: string): boolean {
  const spf = txts.filter((t) => SPF_PREFIX.test(t.trim()))
  if (spf.length !== 1) return false
  const have = new Set(spfTerms(spf[0]!))
  return spfTerms(expected).every((t) => have.has(t))
}

/** Any DMARC policy counts: the operator may well publish a stricter one than `p=none`. */
export function matchesDmarc(txts: string[]): boolean {
  return txts.some((t) => /^v\s*=\s*DMARC1\s*(;|$)/i.test(t.trim()))
}

/** What a TXT lookup found: the records (chunks joined), none at all, or no answer. */
export type TxtLookup =
  | { kind: 'found'; txts: string[] }
  | { kind: 'missing' }
  | { kind: 'error'; code: string }

export function recordMatches(r: DnsRecord, txts: string[]): boolean {
  switch (recordKind(r)) {
    case 'dkim':
      return matchesDkim(txts, parseDkimTags(r.value).get('p') ?? '')
    case 'spf':
      return matchesSpf(txts, r.value)
    case 'dmarc':
      return matchesDmarc(txts)
  }
}

/**
 * Each record's new status from its lookup. A lookup that got no answer (timeout, SERVFAIL)
 * proves nothing, so the record keeps the status it had.
 */
export function applyLookup(r: DnsRecord, lookup: TxtLookup): DnsRecord {
  if (lookup.kind === 'error') return r
  const ok = lookup.kind === 'found' && recordMatches(r, lookup.txts)
  return { ...r, status: ok ? 'verified' : 'failed' }
}

/** How long a new domain stays `pending` while its records are missing, before `failed`. */
export const PENDING_WINDOW_MS = 72 * 3600 * 1000

/**
 * The domain is verified when its DKIM and SPF records are (DMARC is advisory). Missing records
 * on a new domain are normal while DNS propagates, so it stays `pending` for
 * PENDING_WINDOW_MS; after that, or once it had been verified, a missing record is `failed`.
 */
export function deriveVerification(
  records: DnsRecord[],
  previous: DomainVerification,
  createdAt: Date,
  now: Date,
): DomainVerification {
  const required = records.filter((r) => recordKind(r) !== 'dmarc')
  if (required.length > 0 && required.every((r) => r.status === 'verified')) return 'verified'
  // Nothing proven missing (some lookups got no answer): keep what we knew.
  if (!required.some((r) => r.status === 'failed')) return previous
  const young = now.getTime() - createdAt.getTime() < PENDING_WINDOW_MS
  return previous === 'pending' && young ? 'pending' : 'failed'
}

/** Fresh records take the status of the same (name, value) record checked before. */
export function carryStatuses(fresh: DnsRecord[], stored: DnsRecord[]): DnsRecord[] {
  return fresh.map((r) => {
    const old = stored.find((o) => o.name === r.name && o.value === r.value)
    return old ? { ...r, status: old.status } : r
  })
}

/** `DOMAIN_VERIFICATION=skip`: nothing is looked up and everything counts as verified. */
export const skipVerification = (records: DnsRecord[]): DnsRecord[] =>
  records.map((r) => ({ ...r, status: 'verified' }))
