import { z } from 'zod'
import { MailerError } from './errors.js'
import { type IdKind, isId } from './ids.js'

// PostgreSQL has no year 0, and Prisma writes a year past 9999 as `+010000-…`, which it cannot
// read: an instant outside these bounds was a 500 in a filter or a cursor.
const FIRST_STORABLE_MS = Date.parse('0001-01-01T00:00:00.000Z')
const LAST_STORABLE_MS = Date.parse('9999-12-31T23:59:59.999Z')

/** An instant PostgreSQL can compare with a timestamp column (years 0001-9999, UTC). */
export const isStorableInstant = (d: Date): boolean => {
  const t = d.getTime()
  return t >= FIRST_STORABLE_MS && t <= LAST_STORABLE_MS
}

/** `2026-12-01T09:30Z`: hours and minutes, no seconds, then the offset. */
const MINUTES_ONLY = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(Z|[+-]\d{2}:\d{2})$/

/**
 * An ISO 8601 date-time with an offset (`Z` or `±hh:mm`). Seconds may be left out, as ISO 8601
 * allows (`…T09:30Z` is `…T09:30:00Z`); zod's datetime alone required them.
 */
export const isoWithOffset = z.preprocess(
  (v) => (typeof v === 'string' ? v.replace(MINUTES_ONLY, '$1:00$2') : v),
  z.iso
    .datetime({ offset: true })
    .refine((s) => isStorableInstant(new Date(s)), 'must be between 0001-01-01 and 9999-12-31 (UTC)'),
)

/** `…T10:00:00 01:00`: a time followed by a space and an `hh:mm` offset, nothing else. */
const SPACE_BEFORE_OFFSET = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?) (\d{2}:\d{2})$/

/**
 * An instant in a query string (`since`, `until`). A `+` typed into a URL's query is a space once
 * decoded (form encoding, which every server's query parser follows), so
 * `?since=2026-03-01T10:00:00+01:00` arrived as `…T10:00:00 01:00` and was refused as not
 * ISO 8601, although it is exactly what interface.md asks for. No instant has a space before its
 * offset, so that space is read as the `+` it was; `%2B` works as before.
 */
export const queryInstant = z.preprocess(
  (v) => (typeof v === 'string' ? v.replace(SPACE_BEFORE_OFFSET, '$1+$2') : v),
  isoWithOffset,
)

/**
 * A whole-number query parameter from `min` to `max`, written in decimal digits only. `Number()`
 * (what z.coerce does) also reads `0x10`, `1e1`, ` 5`, `+5` and `5.0`: such a value is refused
 * rather than guessed at. A number as such (an RPC caller's JSON) is taken as it is. Documented
 * as an integer (the OpenAPI generator reads the inner schema).
 */
export function queryInt(min: number, max: number) {
  const message = `must be a whole number from ${min} to ${max}, in digits`
  return z.preprocess(
    (v) => (typeof v === 'string' && /^[0-9]+$/.test(v) ? Number(v) : v),
    z.number({ error: message }).int(message).min(min, message).max(max, message),
  )
}

/** `limit` (1-100, default 25) and `cursor`, shared by every paginated list. */
export function pageQuery(max = 100, dflt = 25) {
  return z.object({
    limit: queryInt(1, max).default(dflt),
    cursor: z.string().min(1).optional(),
  })
}

export interface Cursor {
  createdAt: Date
  id: string
}

/** Opaque keyset cursor over (createdAt DESC, id DESC). */
export function encodeCursor(c: Cursor): string {
  return Buffer.from(`${c.createdAt.toISOString()}|${c.id}`).toString('base64url')
}

/**
 * The cursor a list of `kind` returned: its id must be one of that list's (a cursor of another
 * list holds a time and an id of another kind: it would page this list from a wrong place).
 */
export function decodeCursor(s: string | undefined, kind: IdKind): Cursor | undefined {
  if (s === undefined) return undefined
  const raw = Buffer.from(s, 'base64url').toString('utf8')
  const [ts, id] = raw.split('|')
  const createdAt = new Date(ts ?? '')
  // isId takes only `<prefix>_<ULID>` in ASCII: nothing else (a NUL, which PostgreSQL refuses) is ours.
  if (!id || !isId(kind, id) || !isStorableInstant(createdAt)) {
    throw new MailerError('invalid_query', 'cursor is not a cursor this API returned', { param: 'cursor' })
  }
  return { createdAt, id }
}

/** Builds `{ data, nextCursor }` from `limit + 1` rows fetched newest first. */
export function page<T extends { createdAt: Date | string; id: string }, R>(
  rows: T[],
  limit: number,
  map: (row: T) => R,
): { data: R[]; nextCursor: string | null } {
  const more = rows.length > limit
  const slice = more ? rows.slice(0, limit) : rows
  const last = slice[slice.length - 1]
  return {
    data: slice.map(map),
    nextCursor: more && last ? encodeCursor({ createdAt: new Date(last.createdAt), id: last.id }) : null,
  }
}

/**
 * The page of a list whose filter is applied while reading at most a budget of rows past the
 * cursor (docs/api.md, "Lists"): `rows` are the matches found (up to `limit + 1`), `stop` the
 * last row the scan read when it ran out of budget (null when it reached the end). A short page,
 * even an empty one, then carries a cursor from `stop`, so the next request goes on from there
 * and every match is still returned exactly once.
 */
export function scannedPage<T extends { createdAt: Date | string; id: string }, R>(
  rows: T[],
  limit: number,
  map: (row: T) => R,
  stop: Cursor | null,
): { data: R[]; nextCursor: string | null } {
  if (rows.length > limit || !stop) return page(rows, limit, map)
  return { data: rows.map(map), nextCursor: encodeCursor(stop) }
}
