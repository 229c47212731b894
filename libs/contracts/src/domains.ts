import { z } from 'zod'

/**
 * A sending domain name: lower-case LDH labels (punycode for IDNs), at least two labels, a
 * non-numeric top label (so an IP address is not taken for a domain), at most 253 characters.
 */
const LABEL_RE = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/

/** Lower-cases and drops one trailing dot (the DNS root); returns null when not a domain name. */
export function normalizeDomainName(input: string): string | null {
  const name = input.trim().toLowerCase().replace(/\.$/, '')
  if (name.length === 0 || name.length > 253) return null
  const labels = name.split('.')
  if (labels.length < 2 || !labels.every((l) => LABEL_RE.test(l))) return null
  if (/^[0-9]+$/.test(labels[labels.length - 1]!)) return null
  return name
}

/**
 * The longest name a new sending domain may have: its DKIM record is published at
 * `<selector>._domainkey.<domain>` (a selector of 20 characters, up to 24 with the `-N` a shared
 * name gets), and a DNS name holds at most 253 characters, so a longer domain would be asked to
 * publish a record no DNS zone can hold, and could never be verified.
 */
export const MAX_SENDING_DOMAIN_LENGTH = 253 - '._domainkey.'.length - 24

export const DomainVerification = z.enum(['pending', 'verified', 'failed'])
export type DomainVerification = z.infer<typeof DomainVerification>

/** One DNS record the operator must publish, with the result of its last check. */
export const DnsRecord = z.object({
  type: z.literal('TXT'),
  name: z.string(),
  value: z.string(),
  status: DomainVerification,
})
export type DnsRecord = z.infer<typeof DnsRecord>

/** A domain as `GET /v1/domains` and the admin setup route return it (contract.md part 5). */
export const DomainRecord = z.object({
  domain: z.string(),
  verification: DomainVerification,
  records: z.array(DnsRecord),
  checkedAt: z.string().nullable(),
  createdAt: z.string(),
})
export type DomainRecord = z.infer<typeof DomainRecord>

/** `GET /v1/admin/domains`: every domain with the project that owns it. */
export const AdminDomainRecord = DomainRecord.extend({ projectId: z.string(), slug: z.string().nullable() })
export type AdminDomainRecord = z.infer<typeof AdminDomainRecord>

/** The setup route takes no fields: no body, or `{}`; anything else is `invalid_body`. */
export const SetupDomainBody = z.strictObject({})

const flag = z.enum(['1', 'true', '0', 'false']).transform((v) => v === '1' || v === 'true')

/** `GET /v1/domains?refresh=1` re-checks DNS before answering. */
export const DomainsQuery = z.object({ refresh: flag.optional() })

/**
 * email → every email replica, core pub/sub on `domains.invalidate`: a project's domain was
 * created or its verification changed, so cached sender-domain lists of that project are stale.
 */
export const DomainsInvalidation = z.object({ projectId: z.string() })
export type DomainsInvalidation = z.infer<typeof DomainsInvalidation>
