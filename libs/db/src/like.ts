/**
 * `s` as a LIKE/ILIKE pattern that matches itself: PostgreSQL's default escape character is the
 * backslash, and Prisma passes `contains`/`startsWith`/`endsWith` values to LIKE as they are, so
 * without this `%` and `_` in a search would be wildcards.
 */
export const likeLiteral = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`)
