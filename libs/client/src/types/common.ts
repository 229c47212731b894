/** A list that is never paginated. */
export interface DataList<T> {
  data: T[]
}

/** One page of a long list; `nextCursor` is null on the last page. */
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
