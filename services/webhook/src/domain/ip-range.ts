/**
 * Addresses a webhook may not reach unless WEBHOOK_ALLOW_PRIVATE=true: loopback, link-local,
 * private, unspecified, carrier-grade NAT, benchmarking, multicast and reserved ranges, for IPv4 and
 * IPv6 (IPv6 forms that carry an IPv4 address: mapped, compatible, translated, NAT64 and 6to4, are
 * checked as that address; Teredo is refused whole). Pure parsing, no I/O.
 */

type V4Range = [base: number, bits: number]

const V4_BLOCKED: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this network", incl. 0.0.0.0
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking, routed inside some networks
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, incl. 255.255.255.255
]

export function parseIPv4(ip: string): number | null {
  const parts = ip.split('.')
  if (parts.length !== 4) return null
  let n = 0
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return null
    const v = Number(p)
    if (v > 255) return null
    n = n * 256 + v
  }
  return n
}

const V4_RANGES: V4Range[] = V4_BLOCKED.map(([ip, bits]) => [parseIPv4(ip)!, bits])

function inV4Range(n: number, [base, bits]: V4Range): boolean {
  const size = 2 ** (32 - bits)
  return n >= base && n < base + size
}

/** Eight 16-bit groups, or null when `ip` is not an IPv6 address (zone ids are dropped). */
export function parseIPv6(input: string): number[] | null {
  let ip = input.replace(/^\[|\]$/g, '')
  const zone = ip.indexOf('%')
  if (zone >= 0) ip = ip.slice(0, zone)
  if (!ip.includes(':')) return null
  // A dotted IPv4 tail (::ffff:127.0.0.1) becomes two groups.
  const lastColon = ip.lastIndexOf(':')
  const tail = ip.slice(lastColon + 1)
  if (tail.includes('.')) {
    const v4 = parseIPv4(tail)
    if (v4 === null) return null
    ip = `${ip.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`
  }
  const halves = ip.split('::')
  if (halves.length > 2) return null
  const parse = (s: string) => (s === '' ? [] : s.split(':'))
  const head = parse(halves[0]!)
  const rest = halves.length === 2 ? parse(halves[1]!) : []
  const missing = 8 - head.length - rest.length
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest]
  const out: number[] = []
  for (const g of groups) {
    if (!/^[0-9a-f]{1,4}$/i.test(g)) return null
    out.push(Number.parseInt(g, 16))
  }
  return out
}

function v6IsBlocked(g: number[]): boolean {
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, h = 0, i = 0] = g
  const zeroPrefix = a === 0 && b === 0 && c === 0 && d === 0 && e === 0
  if (zeroPrefix && f === 0 && h === 0 && (i === 0 || i === 1)) return true // :: and ::1
  if (zeroPrefix && (f === 0xffff || f === 0)) return v4IsBlocked(h * 65536 + i) // IPv4-mapped / -compatible
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0xffff && f === 0) return v4IsBlocked(h * 65536 + i) // IPv4-translated
  if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0)
    return v4IsBlocked(h * 65536 + i) // NAT64
  if (a === 0x64 && b === 0xff9b && c === 1) return true // 64:ff9b:1::/48, NAT64 for local use
  if (a === 0x2002) return v4IsBlocked(b * 65536 + c) // 6to4: the IPv4 address is the next 32 bits
  // Teredo carries its client's IPv4 address inverted in the last 32 bits; a receiver has no
  // business behind a Teredo tunnel, so the whole prefix is refused.
  if (a === 0x2001 && b === 0) return true
  if (a === 0x100 && b === 0 && c === 0 && d === 0) return true // 100::/64 discard-only
  if ((a & 0xfe00) === 0xfc00) return true // fc00::/7 unique local
  if ((a & 0xffc0) === 0xfe80) return true // fe80::/10 link-local
  if ((a & 0xffc0) === 0xfec0) return true // fec0::/10 site-local (deprecated)
  if ((a & 0xff00) === 0xff00) return true // multicast
  return false
}

function v4IsBlocked(n: number): boolean {
  return V4_RANGES.some((r) => inV4Range(n, r))
}

/** True for an address a webhook must not reach; false for public addresses and non-addresses. */
export function isPrivateAddress(ip: string): boolean {
  const v4 = parseIPv4(ip)
  if (v4 !== null) return v4IsBlocked(v4)
  const v6 = parseIPv6(ip)
  return v6 !== null && v6IsBlocked(v6)
}

/** `[::1]` → `::1`; anything else unchanged. */
export const stripBrackets = (host: string): string => host.replace(/^\[(.*)\]$/, '$1')

export const isIpLiteral = (host: string): boolean =>
  parseIPv4(stripBrackets(host)) !== null || parseIPv6(stripBrackets(host)) !== null

/**
 * `localhost` and every name under it, with or without the root dot, in any case: loopback by
 * definition (RFC 6761 section 6.3), whether or not the resolver at hand answers for them (glibc
 * with /etc/hosts alone does not for `localhost.` or `api.localhost`; systemd-resolved does).
 */
export const isLocalhostName = (host: string): boolean => /(^|\.)localhost\.?$/i.test(host)
