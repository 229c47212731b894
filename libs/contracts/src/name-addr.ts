/**
 * The parts of `"Name" <a@b.c>` or `Name <a@b.c>` (a trimmed value without line breaks) as
 * `/^(?:"((?:[^"\\]|\\.)*)"|([^"<>]*?))\s*<([^<>\s]+)>$/` matched them, or null where it did not
 * match. Read by hand: that regex's lazy unquoted name retried `\s*<` from each of its positions
 * (a `from` with a long run of spaces and no `<` took 3 s at 50 KB; it is parsed before its
 * 400-character limit refuses it), and its quoted name took a backtracking frame per character,
 * a RangeError (a 500) for a `from` of 10 MB opening with `"`.
 */
export function nameAddr(s: string): { name: string; quoted: boolean; address: string } | null {
  const quoted = s.startsWith('"')
  let name: string
  // Where `\s*<address>` has to start.
  let rest: number
  if (quoted) {
    const end = closingQuote(s)
    if (end === -1) return null
    name = s.slice(1, end)
    rest = end + 1
  } else {
    // No `"`, `<` or `>`, up to the first `<`; the whitespace before the `<` is not the name's.
    rest = s.indexOf('<')
    if (rest === -1) return null
    name = s.slice(0, rest)
    if (name.includes('"') || name.includes('>')) return null
    name = name.trimEnd()
  }
  const addr = /^\s*<([^<>\s]+)>$/.exec(s.slice(rest))
  return addr ? { name, quoted, address: addr[1]! } : null
}

/**
 * The index of the `"` closing the quoted string `s` opens, or -1. A `\` takes the character after
 * it, whatever it is, but a line terminator (which the regex's `.` did not match) or nothing.
 */
function closingQuote(s: string): number {
  for (let i = 1; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 0x22) return i
    if (c === 0x5c) {
      const next = s.charCodeAt(i + 1)
      if (Number.isNaN(next) || next === 0x0a || next === 0x0d || next === 0x2028 || next === 0x2029)
        return -1
      i++
    }
  }
  return -1
}
