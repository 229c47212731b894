import { isIP } from 'node:net'
import { envInt } from '@mailer/config'
import { z } from 'zod'

/** `ip`, `ip:port`, `[ipv6]` or `[ipv6]:port`, as node:dns `setServers` takes them. */
export function isDnsServer(s: string): boolean {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(s)
  const m = bracketed ?? (isIP(s) ? [s, s, undefined] : /^([^:]+):(\d{1,5})$/.exec(s))
  if (!m) return false
  const [, host, port] = m
  return isIP(host ?? '') !== 0 && (port === undefined || (Number(port) >= 1 && Number(port) <= 65535))
}

/**
 * Settings of domain verification (contract.md part 1), spread into the email service's env
 * schema: `DOMAIN_VERIFICATION` (`skip`, the dev default, trusts every domain; `dns` checks the
 * published records), `DNS_SERVERS` (comma list; empty = the system resolvers),
 * `DNS_TIMEOUT_MS` per query, and `SPF_INCLUDE` (the relay's SPF domain for the SPF record).
 */
export const dnsEnvFields = {
  DOMAIN_VERIFICATION: z.enum(['dns', 'skip']).default('skip'),
  DNS_SERVERS: z
    .string()
    .default('')
    .transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    )
    .refine((list) => list.every(isDnsServer), 'must be a comma list of ip or ip:port'),
  DNS_TIMEOUT_MS: envInt(2_000, 100, 30_000),
  SPF_INCLUDE: z
    .string()
    .regex(/^[a-z0-9._-]+\.[a-z0-9-]+$/i, 'must be a domain name, e.g. spf.mail.example.com')
    .optional(),
}

/** What the domain handlers read from the environment. */
export interface DnsSettings {
  DOMAIN_VERIFICATION: 'dns' | 'skip'
  DNS_SERVERS: string[]
  DNS_TIMEOUT_MS: number
  SPF_INCLUDE?: string | undefined
}
