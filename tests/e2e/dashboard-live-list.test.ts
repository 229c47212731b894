import { describe, expect, it } from 'vitest'
import {
  cursorPlace,
  newestFirst,
  type Rows,
  withFirstPage,
  withNextPage,
} from '../../services/gateway/dashboard/src/lib/live-list.js'

// The merge rules of the emails list (a first page refreshed every 5 s, "Load more" reading on),
// over every order the two reads can answer in. The browser test
// (dashboard-lists.e2e.test.ts) shows the case of new emails on a real stack.
type Row = { id: string; createdAt: string }

/** Rows 0…n-1, row 0 the newest; ids sort like the API's (same ms, later id first). */
const row = (i: number): Row => ({
  id: `e${String(1000 - i).padStart(4, '0')}`,
  createdAt: new Date(Date.UTC(2026, 0, 1) - i * 1000).toISOString(),
})
const list = (rows: Row[]) => rows.map((r) => r.id)

/** What the API answers for a page of `limit` read from the cursor after `after`. */
function read(all: Row[], limit: number, after?: Row): Rows<Row> {
  const from = after ? all.findIndex((r) => newestFirst(r, after) > 0) : 0
  const data = from < 0 ? [] : all.slice(from, from + limit)
  return { data, nextCursor: from >= 0 && from + limit < all.length ? data.at(-1)!.id : null }
}
const range = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => row(a + i))

describe('emails list: a refreshed first page and Load more', () => {
  const before = range(0, 12)
  const first = () => withFirstPage(undefined, read(before, 5), newestFirst)

  it('reads on from the last row shown after a refresh with new rows landed during Load more', () => {
    const next = read(before, 5, before[4]) // asked before the refresh landed
    const after = [row(-2), row(-1), ...before]
    const shown = withFirstPage(first(), read(after, 5), newestFirst)
    expect(list(withNextPage(shown, next, newestFirst).data)).toEqual(list(after.slice(0, 12)))
  })

  it('does not show a row twice when rows left the list (deleted, filtered out) meanwhile', () => {
    const next = read(before, 5, before[4])
    const after = before.filter((_, i) => i !== 1 && i !== 2)
    const shown = withFirstPage(first(), read(after, 5), newestFirst)
    const merged = withNextPage(shown, next, newestFirst)
    expect(list(merged.data)).toEqual(list(after.slice(0, 8)))
    expect(new Set(list(merged.data)).size).toBe(merged.data.length)
  })

  it('keeps the pages loaded, with fresh first rows, when a refresh lands after Load more', () => {
    const two = withNextPage(first(), read(before, 5, before[4]), newestFirst)
    const after = [row(-1), ...before]
    const shown = withFirstPage(two, read(after, 5), newestFirst)
    expect(list(shown.data)).toEqual(list(after.slice(0, 11)))
    expect(shown.nextCursor).toBe(two.nextCursor)
  })

  it('takes a first page that reaches past the rows shown as the whole of them', () => {
    const after = before.slice(3)
    const shown = withFirstPage(first(), read(after, 5), newestFirst)
    expect(shown).toEqual(read(after, 5))
    // A page read from the old cursor that stops above the rows now shown adds nothing.
    expect(withNextPage(shown, read(before, 2, before[4]), newestFirst).data).toEqual(shown.data)
  })

  it('ends the list when the page read on is empty', () => {
    const all = range(0, 5)
    const shown = withFirstPage(undefined, { data: all, nextCursor: 'x' }, newestFirst)
    expect(withNextPage(shown, { data: [], nextCursor: null }, newestFirst)).toEqual({
      data: all,
      nextCursor: null,
    })
  })
})

/** The cursor the API gives for a place (`<ISO time>|<id>`, base64url). */
const cursorAt = (r: Row) => Buffer.from(`${r.createdAt}|${r.id}`).toString('base64url')

describe('emails list: pages of a filter that stopped reading before the page was full', () => {
  const all = range(0, 30)

  it('reads the place a cursor goes on from, and nothing else', () => {
    expect(cursorPlace(cursorAt(all[3]!))).toEqual(all[3])
    expect(cursorPlace('e0995')).toBeNull()
  })

  it('goes on from an empty page that has a cursor, keeping the rows shown', () => {
    const shown = { data: [all[2]!], nextCursor: cursorAt(all[9]!) }
    const next = { data: [], nextCursor: cursorAt(all[19]!) }
    expect(withNextPage(shown, next, newestFirst)).toEqual({ data: [all[2]], nextCursor: next.nextCursor })
    // From nothing shown yet, too.
    expect(withNextPage({ data: [], nextCursor: cursorAt(all[9]!) }, next, newestFirst)).toEqual(next)
  })

  it('keeps the rows found further down when the first page, read again, is empty with a cursor', () => {
    const shown = { data: [all[15]!, all[22]!], nextCursor: null }
    const first = { data: [], nextCursor: cursorAt(all[9]!) }
    expect(withFirstPage(shown, first, newestFirst)).toEqual(shown)
  })

  it('drops the rows above where the first page read to that it no longer has (they left the filter)', () => {
    const shown = { data: [all[2]!, all[15]!], nextCursor: cursorAt(all[19]!) }
    const first = { data: [], nextCursor: cursorAt(all[9]!) }
    expect(withFirstPage(shown, first, newestFirst)).toEqual({
      data: [all[15]],
      nextCursor: shown.nextCursor,
    })
  })

  it('takes a short first page that read past the rows shown as the whole of them', () => {
    const shown = { data: [all[2]!], nextCursor: cursorAt(all[9]!) }
    const first = { data: [all[1]!], nextCursor: cursorAt(all[12]!) }
    expect(withFirstPage(shown, first, newestFirst)).toEqual(first)
  })
})
