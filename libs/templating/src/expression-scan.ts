/**
 * Characters one `{{…}}` may hold (comments aside). The mustache limit counts `{{` only, so one
 * expression could carry any amount of parsing, compiling and rendering: `{{a.a.a…}}` over
 * 200 KB took 2.9 s to save. Real expressions are a few dozen characters.
 */
export const MAX_EXPRESSION_CHARS = 1_000
/**
 * Path segments (`.` or `..`, `/`), hash arguments (`=`) and subexpressions (`(`) all the expressions of
 * a part may hold together. Each costs about as much to parse and compile as a mustache: one
 * `{{lookup …}}` of 45,000 `k=(lookup a "b")` (under 1 MB) took 5.7 s to save and 73 ms per
 * `#each` iteration. Real templates hold tens to a few hundred.
 */
export const MAX_TEMPLATE_SEGMENTS = 5_000
/**
 * Subexpressions nested in one another: Handlebars parses them in quadratic time (3,000 deep took
 * 3.8 s) and overflows the stack past a few thousand.
 */
export const MAX_SUBEXPRESSION_DEPTH = 20

const COMMENT_END = /--~?\}\}/g

/**
 * What in `s`'s expressions goes past the limits above, or null: one linear pass before anything
 * is parsed. A mustache ends where Handlebars' lexer ends it: at the first `}}` outside a string
 * (`"…"`, `'…'`) or a `[…]` segment, each closed as the lexer closes it (`\"`, `\'`, `\]` escape
 * the closer). Comments hold no expression; `\{{` is text.
 */
export function expressionProblem(s: string): string | null {
  let segments = 0
  for (let at = s.indexOf('{{'); at !== -1; at = s.indexOf('{{', at + 2)) {
    if (s[at - 1] === '\\' && s[at - 2] !== '\\') continue
    const bang = s[at + 2] === '~' ? at + 3 : at + 2
    if (s[bang] === '!') {
      let close: number
      if (s.startsWith('!--', bang)) {
        COMMENT_END.lastIndex = bang + 3
        close = COMMENT_END.exec(s)?.index ?? -1
      } else close = s.indexOf('}}', bang)
      if (close === -1) return null // unclosed: the parser says so
      at = close
      continue
    }
    let depth = 0
    let closer = ''
    let i = at + 2
    for (; i < s.length; i++) {
      if (i - at > MAX_EXPRESSION_CHARS)
        return `a {{…}} expression holds more than ${MAX_EXPRESSION_CHARS} characters`
      const c = s[i]
      if (closer) {
        if (c === '\\' && s[i + 1] === closer) i++
        else if (c === closer) closer = ''
        continue
      }
      if (c === '"' || c === "'") closer = c
      else if (c === '[') closer = ']'
      else if (c === '}' && s[i + 1] === '}') break
      else if (c === '(') {
        segments++
        if (++depth > MAX_SUBEXPRESSION_DEPTH)
          return `subexpressions (…) nest at most ${MAX_SUBEXPRESSION_DEPTH} deep`
      } else if (c === ')') depth--
      // `..` (the parent) is one segment, as `.` is.
      else if (c === '.') {
        if (s[i - 1] !== '.') segments++
      } else if (c === '/' || c === '=') segments++
    }
    if (segments > MAX_TEMPLATE_SEGMENTS)
      return `at most ${MAX_TEMPLATE_SEGMENTS} path segments, arguments and subexpressions in {{…}} expressions`
    at = i
  }
  return null
}
