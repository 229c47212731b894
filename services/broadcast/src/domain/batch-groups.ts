/**
 * Fills consecutive groups of send inputs whose JSON stays within `maxBytes`, so each group fits
 * one NATS message (the bus refuses anything over the server's max_payload, and 100 large
 * newsletters can outgrow it although each email alone is fine). Items are added one at a time,
 * so a caller can send each group as soon as it is full and hold no more than one group (and the
 * item that closed it) at once. Order is kept; an item larger than `maxBytes` on its own is a group
 * of one.
 */
export class GroupFiller<T> {
  private group: T[] = []
  // The array's brackets; each item adds its bytes and a comma.
  private bytes = 2

  constructor(private readonly maxBytes: number) {}

  /** Adds `item`; answers the group it closed (the items before it, which it does not fit with), or null. */
  add(item: T): T[] | null {
    const size = Buffer.byteLength(JSON.stringify(item), 'utf8') + 1
    const closed = this.group.length > 0 && this.bytes + size > this.maxBytes ? this.take() : null
    this.group.push(item)
    this.bytes += size
    return closed
  }

  /** The open group (empty when there is none), leaving none open. */
  take(): T[] {
    const group = this.group
    this.group = []
    this.bytes = 2
    return group
  }
}

/** All of `items` in groups at once (a dry run's single email; GroupFiller for a chunk). */
export function groupsWithin<T>(items: readonly T[], maxBytes: number): T[][] {
  const filler = new GroupFiller<T>(maxBytes)
  const groups: T[][] = []
  for (const item of items) {
    const closed = filler.add(item)
    if (closed) groups.push(closed)
  }
  const last = filler.take()
  if (last.length > 0) groups.push(last)
  return groups
}
