/** A list that is never paginated. */
export interface DataList<T> {
  data: T[]
}

/**
 * One page of a long list; `nextCursor` is null on the last page only. A page can hold fewer than
 * `limit` items, even none, while `nextCursor` is set (a filtered email or event list reads a
 * bounded number of rows per request): page on until it is null, as `iterate()` does.
 */
export interface Page<T> {
  data: T[]
  nextCursor: string | null
}

export interface PageQuery {
  /** 1-100 (suppressions: 1-200). */
  limit?: number
  /** `nextCursor` of the previous page. */
  cursor?: string
}
