import { fail, MailerError, truncate, withoutControls } from '@mailer/contracts'
import { inScope, type RenderScope } from './access-warnings.js'
import { expressionProblem } from './expression-scan.js'
import { htmlToText } from './html-to-text.js'
import { hb, MAX_RENDERED_CHARS, OutputLimit, startPart, startRender } from './instance.js'
import { overBytes } from './over-bytes.js'

export { MAX_RENDER_ITERATIONS, MAX_RENDER_STEPS, MAX_RENDERED_CHARS } from './instance.js'

/** What a render may produce, from the caller's own limit. */
export interface RenderLimits {
  /**
   * The most UTF-8 bytes html and text may have together (a send's MAX_MESSAGE_BYTES). A render
   * stops as soon as its output passes it, and the html's size is checked before any text is
   * derived from it: past it the render is 400 `payload_too_large` with `param` the part, as the
   * send's size check would answer, without the work of producing the rest (`#each` over a
   * megabyte of static html repeated 32 times took a second per email, most of it deriving text
   * from html the size check then refused).
   */
  maxBytes: number
}

/**
 * Mustaches (`{{`) one part may hold. Handlebars parses and compiles a part at about 100 µs per
 * mustache, synchronously, on the service's event loop: a 1 MB part of `{{a}}` held the email
 * service (every project's requests) for about 20 s when saved, and again when first rendered.
 * At this limit a part takes about 0.2 s; real templates hold tens to hundreds (an `#each` body
 * counts once, however many items it repeats for).
 */
export const MAX_TEMPLATE_MUSTACHES = 2_000

/** How many times `{{` occurs in `s`, counted without building anything. */
function mustaches(s: string): number {
  let n = 0
  for (let at = s.indexOf('{{'); at !== -1; at = s.indexOf('{{', at + 2)) n++
  return n
}

/** The parts of an email a template can supply. */
export interface TemplateSource {
  subject?: string | null | undefined
  html?: string | null | undefined
  text?: string | null | undefined
}

export interface RenderedContent {
  subject: string | null
  html: string | null
  /** Given text, else derived from the rendered html, else null. */
  text: string | null
}

export type TemplateField = 'subject' | 'html' | 'text'

/** RFC 5322's line limit, and the send input's subject limit. */
const MAX_SUBJECT = 998

/**
 * Checks Handlebars syntax at save time, so a broken template never reaches a send.
 * Only the built-in helpers `if`, `unless`, `each`, `with` and `lookup` exist; `log`, unknown
 * helpers, partials and decorators would only fail later, when an email is rendered, so they
 * are rejected here, as is a part of more than MAX_TEMPLATE_MUSTACHES expressions or whose
 * expressions hold more than expressionProblem allows (checked before parsing). Throws 400
 * `invalid_template` with `param` = `<prefix><field>`.
 */
export function checkSyntax(source: string, field: TemplateField, paramPrefix = ''): void {
  const param = `${paramPrefix}${field}`
  if (mustaches(source) > MAX_TEMPLATE_MUSTACHES)
    throw fail('invalid_template', `${field}: at most ${MAX_TEMPLATE_MUSTACHES} {{…}} expressions`, param)
  const tooComplex = expressionProblem(source)
  if (tooComplex) throw fail('invalid_template', `${field}: ${tooComplex}`, param)
  let ast: hbs.AST.Program
  try {
    ast = hb.parse(source)
  } catch (e) {
    throw fail('invalid_template', `${field}: ${oneLine(e)}`, param)
  }
  const unsupported = findUnsupported(ast)
  if (unsupported) throw fail('invalid_template', `${field}: ${unsupported} are not supported`, param)
  const misused = findMisusedHelper(ast)
  if (misused) throw fail('invalid_template', `${field}: ${misused}`, param)
  try {
    hb.precompile(source, { knownHelpersOnly: true })
  } catch (e) {
    throw fail('invalid_template', `${field}: ${oneLine(e)}`, param)
  }
}

/** Checks every present part; see checkSyntax. */
export function checkTemplateSyntax(src: TemplateSource, paramPrefix = ''): void {
  for (const field of ['subject', 'html', 'text'] as const) {
    const value = src[field]
    if (typeof value === 'string') checkSyntax(value, field, paramPrefix)
  }
}

export interface CompiledTemplate {
  /**
   * Renders with `data`; a runtime failure is 400 `invalid_template_data` (param `data`), and so
   * is a part over MAX_RENDERED_CHARS without `limits`; with them, see RenderLimits.
   */
  render(data: Record<string, unknown>, limits?: RenderLimits): RenderedContent
}

type Fn = (data: unknown) => string

/**
 * Compiles a template once for many renders (callers cache the result). `{{x}}` is
 * HTML-escaped in html and left as is in subject and text, which are not HTML; `{{{x}}}` is
 * never escaped. The syntax should have been checked with checkSyntax when it was saved.
 */
export function compileTemplate(src: TemplateSource, options: { name?: string } = {}): CompiledTemplate {
  const scope: RenderScope = { name: options.name, warned: new Set() }
  const opts = { knownHelpersOnly: true }
  const compile = (s: string | null | undefined, noEscape: boolean): Fn | null =>
    typeof s === 'string' ? (hb.compile(s, { ...opts, noEscape }) as Fn) : null
  const subject = compile(src.subject, true)
  const html = compile(src.html, false)
  const text = compile(src.text, true)

  return {
    render(data, limits) {
      startRender()
      // Characters never outnumber UTF-8 bytes, so a part past `maxBytes` characters is too large.
      const max = limits ? limits.maxBytes : MAX_RENDERED_CHARS
      let field: TemplateField = 'subject'
      let renderedSubject: string | null = null
      const part = (fn: Fn, f: TemplateField, budget: number): string => {
        field = f
        startPart(budget)
        const out = fn(data)
        if (out.length > budget) throw new OutputLimit()
        return out
      }
      try {
        return inScope(scope, () => {
          renderedSubject = subject ? part(subject, 'subject', max) : null
          const renderedHtml = html ? part(html, 'html', max) : null
          // With limits, html and text share them: the text may have what the html left.
          const textBudget = limits && renderedHtml !== null ? max - renderedHtml.length : max
          return {
            subject: renderedSubject === null ? null : cleanSubject(renderedSubject),
            html: renderedHtml,
            text: text
              ? part(text, 'text', textBudget)
              : renderedHtml !== null
                ? derivedText(renderedHtml, limits)
                : null,
          }
        })
      } catch (e) {
        // A string past V8's limit (~512 Mi characters) is output too large as well.
        if (e instanceof OutputLimit || (e instanceof RangeError && /string length/i.test(e.message))) {
          if (limits)
            throw new RenderTooLarge(
              field,
              limits.maxBytes,
              field === 'subject' || renderedSubject === null ? null : cleanSubject(renderedSubject),
            )
          throw fail(
            'invalid_template_data',
            `The template could not be rendered: the rendered ${field} is longer than ${MAX_RENDERED_CHARS} characters`,
            'data',
          )
        }
        throw fail('invalid_template_data', `The template could not be rendered: ${oneLine(e)}`, 'data')
      }
    },
  }
}

/** Text derived from the rendered html, once the html is known to fit the limits (overBytes). */
function derivedText(html: string, limits: RenderLimits | undefined): string {
  if (limits && overBytes(html, limits.maxBytes)) throw new OutputLimit()
  return htmlToText(html)
}

/**
 * 400 `payload_too_large` from a render that passed its RenderLimits, `param` the part. A send
 * answers it at its size step, after the attachments are checked (contract.md's check order), so
 * it carries the subject rendered before the html or text passed the limit (null when the subject
 * itself did, or the template has none).
 */
export class RenderTooLarge extends MailerError {
  constructor(
    readonly field: TemplateField,
    maxBytes: number,
    readonly subject: string | null,
  ) {
    super(
      'payload_too_large',
      `The email's content is larger than ${maxBytes} bytes: the template's ${field} renders past it with this data`,
      { param: field, status: 400 },
    )
  }
}

/** Renders once (previews, one-off sends); prefer compileTemplate for repeated renders. */
export function renderTemplate(
  src: TemplateSource,
  data: Record<string, unknown>,
  options: { name?: string; limits?: RenderLimits } = {},
): RenderedContent {
  return compileTemplate(src, options).render(data, options.limits)
}

/**
 * A subject is one header line: data containing line breaks must not split it (or inject
 * headers), so they become a space; other control characters (from the data, or the template
 * itself) are dropped, since nodemailer writes them into the header as they are. It is cut at
 * MAX_SUBJECT code units, never between the halves of an emoji (`truncate`: a lone half made the
 * email unstorable, and the send a 500).
 */
function cleanSubject(s: string): string {
  // Whole runs of whitespace, each matched once: `\s*[\r\n]+\s*` retried a run of spaces from
  // each of its positions (40 KB of spaces in data took 0.9 s, 16 MB would take days).
  return truncate(
    withoutControls(s.replace(/\s+/g, (run) => (/[\r\n]/.test(run) ? ' ' : run))).trim(),
    MAX_SUBJECT,
  )
}

/**
 * The error on one line: a whitespace run holding a line break is one space, and Handlebars'
 * `-----^` pointer is `^`. Each run is matched once, whole: `\s*\n\s*` and `-+\^` retried a run
 * from each of its positions, and the message quotes the template (`{{[` + 50,000 spaces or
 * dashes + `] x}}` names an unknown helper of that name), so a save took 2 s at 50 KB.
 */
function oneLine(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e)
  return msg
    .replace(/\s+/g, (run) => (run.includes('\n') ? ' ' : run))
    .replace(/-+(\^?)/g, (run, caret: string) => (caret ? '^' : run))
    .trim()
    .slice(0, 300)
}

/** The first answer of `check` over a Handlebars syntax tree (depth first), or null. */
function firstIn(node: unknown, check: (n: AstNode) => string | null): string | null {
  if (node === null || typeof node !== 'object') return null
  const found = check(node as AstNode)
  if (found) return found
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) {
      for (const v of value) {
        const hit = firstIn(v, check)
        if (hit) return hit
      }
    } else if (value && typeof value === 'object' && value !== (node as { loc?: unknown }).loc) {
      const hit = firstIn(value, check)
      if (hit) return hit
    }
  }
  return null
}

interface AstNode {
  type?: string
  path?: { original?: unknown }
  params?: unknown[]
}

const isCall = (type: string | undefined) =>
  type === 'MustacheStatement' || type === 'BlockStatement' || type === 'SubExpression'

/** The first construct templates may not use (partials, decorators, `log`), if any. */
function findUnsupported(ast: unknown): string | null {
  return firstIn(ast, ({ type, path }) => {
    if (type === 'PartialStatement' || type === 'PartialBlockStatement') return 'partials ({{> name}})'
    if (type === 'Decorator' || type === 'DecoratorBlock') return 'decorators ({{* name}})'
    if (isCall(type) && path?.original === 'log') return 'the log helper ({{log …}})'
    return null
  })
}

const BLOCK_HELPERS = new Set(['if', 'unless', 'with', 'each'])

/**
 * The first built-in helper used in a way that fails every render (Handlebars only finds out
 * then): `if`, `unless`, `with`, `each` take exactly one argument and only as blocks, `lookup`
 * exactly two.
 */
function findMisusedHelper(ast: unknown): string | null {
  return firstIn(ast, ({ type, path, params }) => {
    const name = typeof path?.original === 'string' ? path.original : null
    if (!name) return null
    const n = params?.length ?? 0
    if (type === 'BlockStatement' && BLOCK_HELPERS.has(name) && n !== 1)
      return `{{#${name}}} needs exactly one argument (it has ${n})`
    if ((type === 'MustacheStatement' || type === 'SubExpression') && BLOCK_HELPERS.has(name))
      return `{{${name}}} works only as a block: {{#${name} …}}…{{/${name}}}`
    if (name === 'lookup' && type !== 'BlockStatement' && n !== 2 && type !== undefined)
      return `{{lookup}} needs exactly two arguments (it has ${n})`
    return null
  })
}
