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

/** The list's own order: negative when `a` comes before (is newer than) `b`. */
export type Order<T> = (a: T, b: T) => number

/** Newest first by `createdAt`, then by id: the order of the API's cursor-paginated lists. */
export const newestFirst = <T extends { id: string; createdAt: string }>(a: T, b: T): number =>
  a.createdAt !== b.createdAt
    ? a.createdAt < b.createdAt
      ? 1
      : -1
    : a.id === b.id
      ? 0
      : a.id < b.id
        ? 1
        : -1

/** The rows shown once a fresh first page came in. */
export function withFirstPage<T extends { id: string }>(
  shown: Rows<T> | undefined,
  first: Rows<T>,
  order: Order<T>,
): Rows<T> {
  const last = first.data.at(-1)
  const shownLast = shown?.data.at(-1)
  // The first page reaches as far as what was shown (or is the whole list): it is all there is.
  if (!shown || !last || !first.nextCursor || !shownLast || order(shownLast, last) <= 0) return first
  const ids = new Set(first.data.map((r) => r.id))
  // Rows newer than its last row that it no longer has were deleted or left the filter.
  const older = shown.data.filter((r) => order(r, last) > 0 && !ids.has(r.id))
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
  const nextLast = next.data.at(-1)
  if (!last) return next
  // Nothing below the page read: nothing below the rows shown either.
  if (!nextLast || order(nextLast, last) <= 0)
    return next.nextCursor ? shown : { data: shown.data, nextCursor: null }
  const ids = new Set(shown.data.map((r) => r.id))
  const below = next.data.filter((r) => order(r, last) > 0 && !ids.has(r.id))
  return { data: [...shown.data, ...below], nextCursor: next.nextCursor }
}
