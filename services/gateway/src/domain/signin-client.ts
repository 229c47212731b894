/**
 * Who the dashboard's sign-in limiter counts a try against, from the client address Express gives
 * (`req.ip`: the socket's, or the X-Forwarded-For entry TRUST_PROXY picks). An IPv4 client is one
 * address. An IPv6 client is its /64: a host, a home line or a cloud VM is given a whole /64 and
 * can take a new address in it for every try, so counting exact IPv6 addresses let a guesser of
 * the admin key try without limit. One address written several ways (case, `::`, leading zeros,
 * a zone id, a port, IPv4 inside IPv6) gives one key.
 */
export function signinClient(ip: string | undefined): string {
  if (ip === undefined) return 'unknown' // the socket is gone (Express has no address)
  const address = withoutPort(ip.trim())
  const v4 = parseIPv4(address)
  if (v4) return v4.join('.')
  const v6 = parseIPv6(address)
  if (!v6) return ip // not an address (a proxy's `unknown`): counted as written, as before
  const embedded = embeddedIPv4(v6)
  if (embedded) return embedded.join('.')
  return `${formatIPv6([...v6.slice(0, 4), 0, 0, 0, 0])}/64`
}

/**
 * `[2001:db8::1]:443`, `[2001:db8::1]` and `192.0.2.1:443` without the port: some proxies
 * (Azure Application Gateway) write it, and the client's port changes with every connection.
 */
function withoutPort(s: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(s)
  if (bracketed) return bracketed[1]!
  const v4 = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(s)
  return v4 ? v4[1]! : s
}

/** Dotted decimal, four parts of 0-255; undefined for anything else. */
function parseIPv4(s: string): number[] | undefined {
  if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(s)) return undefined
  const bytes = s.split('.').map(Number)
  return bytes.every((b) => b <= 255) ? bytes : undefined
}

/** The eight 16-bit groups of an IPv6 address (any case, `::`, an IPv4 tail, a zone id). */
function parseIPv6(s: string): number[] | undefined {
  const zone = s.indexOf('%') // `fe80::1%eth0`: the zone names the gateway's interface, not the client
  const text = (zone >= 0 ? s.slice(0, zone) : s).toLowerCase()
  if (!text.includes(':')) return undefined
  const halves = text.split('::')
  if (halves.length > 2) return undefined
  const head = groups(halves[0]!, halves.length === 1)
  const tail = halves.length === 2 ? groups(halves[1]!, true) : []
  if (!head || !tail) return undefined
  if (halves.length === 1) return head.length === 8 ? head : undefined
  if (head.length + tail.length > 7) return undefined // `::` stands for one group at least
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail]
}

/** Colon-separated hex groups; the last may be dotted IPv4 (two groups) when `ipv4Tail`. */
function groups(part: string, ipv4Tail: boolean): number[] | undefined {
  if (part === '') return []
  const out: number[] = []
  const items = part.split(':')
  for (const [i, item] of items.entries()) {
    if (ipv4Tail && i === items.length - 1 && item.includes('.')) {
      const v4 = parseIPv4(item)
      if (!v4) return undefined
      out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!)
    } else if (/^[0-9a-f]{1,4}$/.test(item)) {
      out.push(Number.parseInt(item, 16))
    } else {
      return undefined
    }
  }
  return out
}

/**
 * The IPv4 client inside an IPv4-mapped address (`::ffff:192.0.2.1`, which Node gives for an IPv4
 * connection to a dual-stack socket) or the NAT64 well-known prefix (`64:ff9b::/96`, RFC 6052):
 * as a /64 every IPv4 client would share one count, and one guesser would lock out them all.
 */
function embeddedIPv4(g: number[]): number[] | undefined {
  const mapped = g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff
  const nat64 = g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)
  if (!mapped && !nat64) return undefined
  return [g[6]! >> 8, g[6]! & 0xff, g[7]! >> 8, g[7]! & 0xff]
}

/** RFC 5952 text: lower-case hex without leading zeros, the longest run of two or more zero groups as `::`. */
function formatIPv6(g: number[]): string {
  let best = { start: -1, length: 1 }
  for (let i = 0; i < 8; ) {
    let j = i
    while (j < 8 && g[j] === 0) j++
    if (j - i > best.length) best = { start: i, length: j - i }
    i = j > i ? j : i + 1
  }
  const hex = g.map((x) => x.toString(16))
  if (best.start < 0) return hex.join(':')
  const before = hex.slice(0, best.start).join(':')
  const after = hex.slice(best.start + best.length).join(':')
  return `${before}::${after}`
}
