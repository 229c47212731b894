import { type IdKind, isId } from './ids.js'

/**
 * What an error message may quote back of what a request named (docs/api.md, "Not found"). The
 * message is printed and logged by clients and proxies, so a key or secret pasted where an id or
 * slug belongs must not travel on in it: a value is quoted only when it has the form of the thing
 * it names (an id of that kind, a slug, a template name), at most QUOTABLE_MAX characters, and
 * does not start like a secret this API hands out. Anything else is "that id" / "that slug";
 * `param` still says which parameter it was.
 */
const SECRET_PREFIXES = ['fs_live_', 'fs_test_', 'whsec_'] as const
/** The longest id (`email_` and a 26-character ULID); longer slugs and names are not quoted. */
const QUOTABLE_MAX = 32

/** An id kind (`<prefix>_<ULID>`) or the pattern a name or slug follows. */
export type ValueForm = IdKind | RegExp

export function isQuotable(value: string | undefined, form: ValueForm): value is string {
  if (value === undefined || value.length > QUOTABLE_MAX) return false
  if (SECRET_PREFIXES.some((p) => value.startsWith(p))) return false
  return typeof form === 'string' ? isId(form, value) : form.test(value)
}

/** `No <thing> with <field> '<value>'`, or `No <thing> with that <field>` (see isQuotable). */
export function noSuch(thing: string, field: string, value: string | undefined, form: ValueForm): string {
  return isQuotable(value, form) ? `No ${thing} with ${field} '${value}'` : `No ${thing} with that ${field}`
}
