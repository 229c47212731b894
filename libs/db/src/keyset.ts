/** A place in a newest-first list: (created_at DESC, id DESC), what a list cursor holds. */
export interface KeysetPlace {
  createdAt: Date
  id: string
}

/**
 * Rows strictly past `c` in newest-first order. The `lte` repeats what the OR says so that
 * PostgreSQL can start the index scan at the cursor: an OR alone is only a filter, and each page
 * then read every row newer than it again.
 */
export const pastPlace = (c: KeysetPlace) => ({
  createdAt: { lte: c.createdAt },
  OR: [{ createdAt: { lt: c.createdAt } }, { createdAt: c.createdAt, id: { lt: c.id } }],
})

/** Rows at `c` or before it in newest-first order (newer, or as new with an id not below). */
export const upToPlace = (c: KeysetPlace) => ({
  createdAt: { gte: c.createdAt },
  OR: [{ createdAt: { gt: c.createdAt } }, { createdAt: c.createdAt, id: { gte: c.id } }],
})

/**
 * Where a bounded scan of a filtered list stops: the `rows`-th row of the scope (`edge`, read
 * with `skip: rows - 1, take: 2` in the list's order), or null when the scope has no row past it,
 * so that the scan reaches the list's end.
 */
const scanStop = (edge: KeysetPlace[]): KeysetPlace | null =>
  edge.length > 1 && edge[0] ? { createdAt: edge[0].createdAt, id: edge[0].id } : null

/**
 * One page of a newest-first list. `scope` is what an index reads in the list's order; `filters`
 * are checked on the rows read, so a filter few rows match would read the whole scope. With
 * `scanRows` (null: unbounded) only the scope's first `scanRows` rows are read: `edge` finds the
 * last of them, `rows` reads up to it, and `stop` says where the scan stopped (null when the
 * scope ended first) for the caller's cursor (scannedPage). `edge` and `rows` are the table's
 * findMany with the list's order (and `rows` its `take`).
 */
export async function scanList<W, R>(
  scope: W[],
  filters: W[],
  scanRows: number | null,
  read: {
    edge(q: { where: { AND: W[] }; skip: number; take: number }): Promise<KeysetPlace[]>
    rows(where: { AND: Array<W | ReturnType<typeof upToPlace>> }): Promise<R[]>
  },
): Promise<{ rows: R[]; stop: KeysetPlace | null }> {
  const stop =
    scanRows === null
      ? null
      : scanStop(await read.edge({ where: { AND: scope }, skip: scanRows - 1, take: 2 }))
  const rows = await read.rows({ AND: [...scope, ...filters, ...(stop ? [upToPlace(stop)] : [])] })
  return { rows, stop }
}
