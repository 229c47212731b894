/**
 * `s` cut to at most `max` UTF-16 code units (JavaScript's `length`, what Mailer's length limits
 * count), one shorter when the cut would fall inside a surrogate pair: the high half is dropped
 * with its low half instead of being kept alone.
 *
 * Why: a character outside the BMP (an emoji) is two code units, and `s.slice(0, max)` across one
 * leaves a lone high surrogate. JSON.stringify writes it as `"\ud83d"`, which PostgreSQL's jsonb
 * refuses (22P02 `invalid input syntax for type json`), so a row or event passed as a jsonb
 * parameter (an email's preview, a rendered subject, an SMTP reply in an event) failed the whole
 * write with a 500. A text parameter would only have turned it into U+FFFD.
 */
export function truncate(s: string, max: number): string {
  if (s.length <= max) return s
  if (max <= 0) return ''
  const last = s.charCodeAt(max - 1)
  return s.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max)
}
