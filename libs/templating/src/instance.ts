import Handlebars from 'handlebars'

/**
 * The Handlebars environment every template here is parsed, compiled and rendered with, and the
 * budgets of the render in progress (renders are synchronous, so module state serves the one
 * running). Nothing registered on the global Handlebars object (by us or a dependency) can change
 * what a stored template does, and nothing here changes the global object.
 */
export const hb = Handlebars.create()

/**
 * One render may repeat `#each` blocks at most this many times in all. Nested `#each` over a few
 * hundred items multiplies into billions of iterations (~90 ns each), which would hold the
 * service's event loop for hours from a request of a few KB; real emails stay far below.
 */
export const MAX_RENDER_ITERATIONS = 100_000
/**
 * Expression evaluations one render (all parts) may make: each `{{x}}`/`{{{x}}}` output and each
 * helper call (`if`, `each`, `lookup`…). Iterations alone are not the work: an `#each` body of
 * 2,000 expressions over 20,000 items held the event loop 6 s while under the iteration limit. A
 * 10,000-row table of 10 columns, each cell in an `{{#if}}`, takes about 210,000.
 */
export const MAX_RENDER_STEPS = 1_000_000
/**
 * A rendered part longer than this fails instead of being turned into text (a few references to
 * a large value reach hundreds of MB cheaply), when the caller gives no RenderLimits.
 */
export const MAX_RENDERED_CHARS = 32 * 1024 * 1024

/** The render did more work than it may (iterations or steps): invalid_template_data. */
export class RenderLimit extends Error {}
/** The part being rendered grew past the characters it may have. */
export class OutputLimit extends Error {}

let iterationsLeft = MAX_RENDER_ITERATIONS
let stepsLeft = MAX_RENDER_STEPS
/** Characters the part being rendered may have. */
let outputBudget = MAX_RENDERED_CHARS
/**
 * Characters the `#each` iterations of the part have produced so far, each counted once: an
 * iteration's output replaces what its nested iterations added, as it holds theirs.
 */
let produced = 0
/**
 * Characters the part's expressions have output so far. Each output is a distinct piece of the
 * part's final text, so their sum never exceeds it: stopping past the budget never refuses a part
 * that fits, and the copies `{{x}}` makes (escaped, or an array stringified) cannot pile up past
 * it before the part ends (`{{x}}` × 2000 over 300 KB of `&` ran the service out of heap).
 */
let emitted = 0

/** Resets the budgets for a new render. */
export function startRender(): void {
  iterationsLeft = MAX_RENDER_ITERATIONS
  stepsLeft = MAX_RENDER_STEPS
}

/** Resets the output budget for the next part: it may have `budget` characters. */
export function startPart(budget: number): void {
  outputBudget = budget
  produced = 0
  emitted = 0
}

function step(): void {
  if (--stepsLeft < 0) {
    throw new RenderLimit(
      `the template would evaluate more than ${MAX_RENDER_STEPS} expressions with this data`,
    )
  }
}

function charge(s: string): string {
  step()
  emitted += s.length
  if (emitted > outputBudget) throw new OutputLimit()
  return s
}

/** `{{x}}` in html: escaped, as Handlebars does, and charged. */
const chargedEscape = (v: unknown): string => charge(hb.Utils.escapeExpression(v as string))
/** `{{x}}` in subject and text, `{{{x}}}` anywhere: as Handlebars appends it, and charged. */
const chargedString = (v: unknown): string => charge(v == null ? '' : `${v}`)

const builtinEach = hb.helpers.each as Handlebars.HelperDelegate
hb.registerHelper('each', function (this: unknown, context: unknown, options: Handlebars.HelperOptions) {
  const fn = options.fn
  const counted = (ctx: unknown, opts?: Handlebars.RuntimeOptions) => {
    if (--iterationsLeft < 0) {
      throw new RenderLimit(`#each would repeat more than ${MAX_RENDER_ITERATIONS} times with this data`)
    }
    const before = produced
    const out = fn(ctx, opts)
    produced = before + out.length
    // A lower bound of the part's length: stopping here never refuses a part that would fit.
    if (produced > outputBudget) throw new OutputLimit()
    return out
  }
  return builtinEach.call(this, context, { ...options, fn: counted as Handlebars.TemplateDelegate })
})
// The built-in `log` helper writes its arguments (a contact's address, its data) to the process's
// stdout at every render, outside the JSON logs. Templates cannot use it (checkSyntax); one saved
// before that renders it as nothing.
hb.registerHelper('log', () => '')

// Every helper call is a step (helperMissing and blockHelperMissing included: `{{#items}}`).
for (const [name, helper] of Object.entries(hb.helpers)) {
  hb.helpers[name] = function (this: unknown, ...args: unknown[]) {
    step()
    return (helper as (...a: unknown[]) => unknown).apply(this, args)
  }
}

// Compiled templates append every expression's output through the charged functions: a mustache
// compiles to `appendEscaped` (html `{{x}}`, through `container.escapeExpression`) or to the
// `appendCharged` opcode below (instead of `append`, which block helpers' output still uses, as
// it holds outputs already charged). The container a template runs with only exists inside
// Handlebars' runtime, so the template's entry function sets both there when it is called.
interface Compilers {
  Compiler: new () => object
  JavaScriptCompiler: new () => object
}
const base = hb as unknown as Compilers

class ChargingCompiler extends base.Compiler {
  MustacheStatement(this: CompilerInternals, mustache: { escaped: boolean }): void {
    this.SubExpression(mustache)
    this.opcode(mustache.escaped && !this.options.noEscape ? 'appendEscaped' : 'appendCharged')
  }
}
interface CompilerInternals {
  SubExpression(m: unknown): void
  opcode(name: string): void
  options: { noEscape?: boolean }
}

class ChargingJavaScriptCompiler extends base.JavaScriptCompiler {
  appendCharged(this: JsCompilerInternals): void {
    this.pushSource(
      this.appendToBuffer([this.aliasable('container.chargedString'), '(', this.popStack(), ')']),
    )
  }
}
interface JsCompilerInternals {
  pushSource(s: unknown): void
  appendToBuffer(parts: unknown[]): unknown
  aliasable(name: string): unknown
  popStack(): unknown
}
// Child programs (block bodies) are compiled with `new this.compiler()`.
Object.assign(ChargingCompiler.prototype, { compiler: ChargingCompiler })
Object.assign(ChargingJavaScriptCompiler.prototype, { compiler: ChargingJavaScriptCompiler })
Object.assign(hb, { Compiler: ChargingCompiler, JavaScriptCompiler: ChargingJavaScriptCompiler })

type Main = (container: Record<string, unknown>, ...rest: unknown[]) => string
const runtimeTemplate = hb.template.bind(hb)
hb.template = ((spec: { main: Main }) => {
  const main = spec.main
  spec.main = function (this: unknown, container, ...rest) {
    container.escapeExpression = chargedEscape
    container.chargedString = chargedString
    return main.call(this, container, ...rest)
  }
  return runtimeTemplate(spec as unknown as TemplateSpecification)
}) as typeof hb.template
type TemplateSpecification = Parameters<typeof hb.template>[0]
