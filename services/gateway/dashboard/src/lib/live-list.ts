/**
 * The rows of a newest-first, cursor-paginated list that is shown page after page ("Load more")
 * while its first page is read again every few seconds. Plain functions (no React) so the merge
 * rules can be tested on their own.
 *
 * The rows shown always cover the list from its top down to their last row, with nothing missing
 * in between, whatever order the reads answer in: a refreshed first page replaces the rows down to
 * its own last row and keeps the older rows read before; a further page adds only rows older than
 * the last one shown. So a refresh that lands while "Load more" is on its way cannot make the
 * next page start below a row that is not shown (skipped rows), nor above one that is (a row twice),
 * and the pages after the first are not read again at every refresh.
 */
export interface Rows<T> {
  data: T[]
  nextCursor: string | null
}

/** A place in a newest-first list: a row, or where a page's cursor goes on from. */
export interface Place {
  createdAt: string
  id: string
}

/** The list's own order: negative when `a` comes before (is newer than) `b`. */
export type Order<T> = (a: T | Place, b: T | Place) => number

/** Newest first by `createdAt`, then by id: the order of the API's cursor-paginated lists. */
export const newestFirst = <T extends Place>(a: T, b: T): number =>
  a.createdAt !== b.createdAt
    ? a.createdAt < b.createdAt
      ? 1
      : -1
    : a.id === b.id
      ? 0
      : a.id < b.id
        ? 1
        : -1

/**
 * Where a page's `nextCursor` goes on from. A filtered email list stops reading after a budget of
 * rows and answers a short or even empty page whose cursor points below its last row (docs/api.md,
 * "Lists"): how far a page reached is that place, not its last row. The cursor is opaque to API
 * clients; the dashboard ships with the API and reads it (`<ISO time>|<id>` in base64url). Null
 * for anything else, and the page's last row stands for it.
 */
export function cursorPlace(cursor: string): Place | null {
  try {
    const [createdAt, id] = atob(cursor.replace(/-/g, '+').replace(/_/g, '/')).split('|')
    return createdAt && id && !Number.isNaN(Date.parse(createdAt)) ? { createdAt, id } : null
  } catch {
    return null
  }
}

/** How far down a page (or the rows shown) covers the list; null: to its end. */
const reachOf = <T extends { id: string }>(rows: Rows<T>): T | Place | null | undefined =>
  rows.nextCursor === null ? null : (cursorPlace(rows.nextCursor) ?? rows.data.at(-1))

/** The rows shown once a fresh first page came in. */
export function withFirstPage<T extends { id: string }>(
  shown: Rows<T> | undefined,
  first: Rows<T>,
  order: Order<T>,
): Rows<T> {
  const reach = reachOf(first)
  const shownLast = shown?.data.at(-1)
  // The first page reaches as far as what was shown (or is the whole list): it is all there is.
  if (!shown || !reach || !shownLast || order(shownLast, reach) <= 0) return first
  const ids = new Set(first.data.map((r) => r.id))
  // Rows it covered and no longer has were deleted or left the filter.
  const older = shown.data.filter((r) => order(r, reach) > 0 && !ids.has(r.id))
  return { data: [...first.data, ...older], nextCursor: shown.nextCursor }
}

/**
 * The rows shown once a further page, read from a cursor the rows shown had earlier, came in. The
 * rows shown only ever reach further down, so that cursor is at or above their last row.
 */
export function withNextPage<T extends { id: string }>(
  shown: Rows<T>,
  next: Rows<T>,
  order: Order<T>,
): Rows<T> {
  const last = shown.data.at(-1)
  if (!last) return next
  const ids = new Set(shown.data.map((r) => r.id))
  const below = next.data.filter((r) => order(r, last) > 0 && !ids.has(r.id))
  // Read on from whichever reached further: a page that found nothing may still have read on
  // (an empty page with a cursor), and one that stopped above the rows shown adds nothing.
  const nextReach = reachOf(next)
  const shownReach = reachOf(shown)
  const further =
    nextReach === null || shownReach === null
      ? null
      : !nextReach || !shownReach || order(nextReach, shownReach) > 0
        ? next.nextCursor
        : shown.nextCursor
  return { data: [...shown.data, ...below], nextCursor: further }
}
