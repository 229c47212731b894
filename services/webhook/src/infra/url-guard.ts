import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { lookup } from 'node:dns/promises'
import type { LookupFunction } from 'node:net'
import { fail } from '@mailer/contracts'
import { isIpLiteral, isLocalhostName, isPrivateAddress, stripBrackets } from '../domain/ip-range.js'

const ALLOW_HINT = 'set WEBHOOK_ALLOW_PRIVATE=true to allow it'

export class BlockedAddressError extends Error {
  readonly code = 'EBLOCKED'
}

const blockedMessage = (host: string, address: string) =>
  host === address
    ? `${address} is a loopback, link-local or private address; ${ALLOW_HINT}`
    : `${host} resolves to ${address}, a loopback, link-local or private address; ${ALLOW_HINT}`

const localhostMessage = (host: string) =>
  `${host} is a localhost name (RFC 6761), a loopback, link-local or private address; ${ALLOW_HINT}`

/**
 * For a host refused by its text alone (an IP literal in a blocked range, or a localhost name):
 * the reason, or null. Other host names are checked by what they resolve to (`guardedLookup`).
 */
export function literalBlockReason(url: URL): string | null {
  const host = stripBrackets(url.hostname)
  if (isLocalhostName(host)) return localhostMessage(host)
  return isIpLiteral(host) && isPrivateAddress(host) ? blockedMessage(host, host) : null
}

/**
 * Create/update check: refuses a URL whose host is, or resolves to, a private address (400
 * `invalid_body`, param `url`). A host that does not resolve (yet) is accepted; delivery checks
 * again at connect time.
 */
export async function assertPublicUrl(raw: string, allowPrivate: boolean, timeoutMs = 3_000): Promise<void> {
  if (allowPrivate) return
  const url = new URL(raw)
  const literal = literalBlockReason(url)
  if (literal) throw fail('invalid_body', `url: ${literal}`, 'url')
  const host = stripBrackets(url.hostname)
  if (isIpLiteral(host)) return
  let addresses: LookupAddress[] = []
  try {
    addresses = await Promise.race([
      lookup(host, { all: true, verbatim: true }),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('dns timeout')), timeoutMs).unref(),
      ),
    ])
  } catch {
    return
  }
  const bad = addresses.find((a) => isPrivateAddress(a.address))
  if (bad) throw fail('invalid_body', `url: ${blockedMessage(host, bad.address)}`, 'url')
}

/** A resolver with `dns.lookup`'s signature: the system's, or a stand-in (tests: a rebound name). */
export type Resolver = typeof dnsLookup

/**
 * A `lookup` for http.request that refuses private addresses at connect time, so a DNS answer
 * that changed after the webhook was saved (DNS rebinding) cannot reach internal hosts.
 */
export const guardedLookupVia =
  (resolve: Resolver): LookupFunction =>
  (hostname, options, callback) => {
    resolve(hostname, { ...options, verbatim: true }, (err, address, family) => {
      if (err) return (callback as (e: Error) => void)(err)
      const list: LookupAddress[] = Array.isArray(address)
        ? address
        : [{ address: address as string, family: family ?? 4 }]
      const bad = list.find((a) => isPrivateAddress(a.address))
      if (bad)
        return (callback as (e: Error) => void)(
          new BlockedAddressError(blockedMessage(hostname, bad.address)),
        )
      ;(callback as (e: null, a: unknown, f?: number) => void)(null, address, family)
    })
  }

export const guardedLookup: LookupFunction = guardedLookupVia(dnsLookup)
