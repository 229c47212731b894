export { setTemplateLogger, type TemplateLogger } from './access-warnings.js'
export {
  type CompiledTemplate,
  checkSyntax,
  checkTemplateSyntax,
  compileTemplate,
  type RenderedContent,
  type RenderLimits,
  RenderTooLarge,
  renderTemplate,
  type TemplateField,
  type TemplateSource,
} from './compile.js'
export { decodeEntities, htmlToText } from './html-to-text.js'
export { overBytes } from './over-bytes.js'
export {
  checkRequired,
  exampleData,
  lookupPath,
  templateData,
  type VariableSpec,
} from './variables.js'
