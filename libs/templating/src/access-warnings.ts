import Handlebars from 'handlebars'

/** What the templating lib needs of a service's logger (a pino logger fits). */
export interface TemplateLogger {
  warn(fields: Record<string, unknown>, msg: string): void
}

/** The render in progress: renders are synchronous, so one slot serves them all. */
export interface RenderScope {
  /** The template's name (or what the caller calls it), for the warning. */
  name: string | undefined
  /** Properties already warned about for this compiled template. */
  warned: Set<string>
}

let sink: TemplateLogger | null = null
let current: RenderScope | null = null

/**
 * Sends the templating lib's warnings to the service's logger. Until a service calls this they
 * are dropped: a write of our own would be one more non-JSON line.
 */
export function setTemplateLogger(logger: TemplateLogger | null): void {
  sink = logger
}

/** Runs one render with `scope` as the one Handlebars' warnings are about. */
export function inScope<T>(scope: RenderScope, render: () => T): T {
  current = scope
  try {
    return render()
  } finally {
    current = null
  }
}

// In Handlebars since 4.6, missing from its type declarations.
const resetLogged = () =>
  (Handlebars as unknown as { resetLoggedPropertyAccesses(): void }).resetLoggedPropertyAccesses()

const DENIED = /^Handlebars: Access has been denied to resolve the property "([^"]*)"/

// Handlebars writes its warnings with console (a multi-line text block on stderr when a template
// reads an inherited property such as `{{constructor}}`), which breaks the JSON lines log
// pipelines parse. Its logger is one object shared by every Handlebars environment in the
// process, and the only way to reach that write. What it says becomes one JSON warn line, with
// the template's name and the property, never the data.
Handlebars.logger.log = (_level: unknown, ...message: unknown[]) => {
  const text = typeof message[0] === 'string' ? message[0] : ''
  const denied = DENIED.exec(text)
  if (denied) {
    // Handlebars says so once per property per process; warn once per compiled template instead.
    resetLogged()
    const property = denied[1] ?? ''
    if (current?.warned.has(property)) return
    current?.warned.add(property)
    sink?.warn(
      { template: current?.name, property },
      'template reads a property its data does not have as its own; it renders as empty',
    )
    return
  }
  // Nothing else reaches here today (the `log` helper is replaced); keep only the first line.
  sink?.warn({ template: current?.name }, `handlebars: ${text.split('\n')[0]?.slice(0, 200) ?? ''}`)
}
