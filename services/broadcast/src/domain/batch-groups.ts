/**
 * Splits a chunk's send inputs into consecutive groups whose JSON stays within `maxBytes`, so
 * each group fits one NATS message (the bus refuses anything over the server's max_payload, and
 * 100 large newsletters can outgrow it although each email alone is fine). Order is kept; an item
 * larger than `maxBytes` on its own is a group of one.
 */
export function groupsWithin<T>(items: readonly T[], maxBytes: number): T[][] {
  const groups: T[][] = []
  let group: T[] = []
  // The array's brackets; each item adds its bytes and a comma.
  let bytes = 2
  for (const item of items) {
    const size = Buffer.byteLength(JSON.stringify(item), 'utf8') + 1
    if (group.length > 0 && bytes + size > maxBytes) {
      groups.push(group)
      group = []
      bytes = 2
    }
    group.push(item)
    bytes += size
  }
  if (group.length > 0) groups.push(group)
  return groups
}
