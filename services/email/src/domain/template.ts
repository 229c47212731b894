import type { RenderLimits } from '@mailer/templating'

/** What a template supplies to a send; explicit `subject`/`html`/`text` in the input win. */
export interface RenderedTemplate {
  subject: string | null
  html: string | null
  /** The template's own text part, or one derived from its rendered html (null: none). */
  text: string | null
  /** Whether `text` is the template's own part rather than derived from its html. */
  ownText: boolean
  version: number
}

/**
 * Renders a project's template with the send's `data`. Implementations throw a MailerError:
 * 404 `template_not_found` for an unknown name, 400 `invalid_template_data` (param `data...`)
 * when the data does not fit the template's variables, 400 `payload_too_large` (param the part)
 * as soon as the output passes `limits` (RenderLimits).
 */
export interface TemplateRenderer {
  /**
   * Makes the named templates ready (fetched and compiled, concurrently) before a batch renders
   * its items one at a time; never throws (render answers for a name that failed).
   */
  prefetch(projectId: string, names: Iterable<string>): Promise<void>
  render(
    projectId: string,
    name: string,
    data: Record<string, unknown>,
    limits: RenderLimits,
  ): Promise<RenderedTemplate>
}
