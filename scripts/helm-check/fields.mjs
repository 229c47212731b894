// Unknown-field check. The Kubernetes schemas in kubernetes-models accept any extra property
// (as the API server's OpenAPI does), so a typo such as `readinesProbe` would pass validate().
// The package's .d.ts files list every field of every type; walk the object along them.
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const parsed = new Map()

/** The .d.ts beside a module that `import` resolves to. */
const dtsOf = (specifier, from) =>
  specifier.startsWith('.')
    ? resolve(dirname(from), specifier.replace(/\.js$/, '.d.ts'))
    : fileURLToPath(import.meta.resolve(specifier)).replace(/\.js$/, '.d.ts')

/**
 * Fields of the interface a .d.ts declares: name -> .d.ts of the field's type, or null for
 * scalars, string maps and aliases (Quantity, IntOrString). Null when the file declares no
 * interface (a type alias), which ends the walk there.
 */
function fieldsOf(dts) {
  if (parsed.has(dts)) return parsed.get(dts)
  const src = readFileSync(dts, 'utf8')
  const imports = new Map(
    [...src.matchAll(/^import \{ (\w+) \} from "([^"]+)";$/gm)].map((m) => [m[1], m[2]]),
  )
  const body = src.match(/^export interface \w+(?: extends [\w, ]+)? \{\n([\s\S]*?)^\}/m)
  let fields = null
  if (body) {
    fields = new Map()
    // Top-level members are indented 4 spaces; nested map types are indented deeper.
    for (const m of body[1].matchAll(/^ {4}"([^"]+)"\??: (.+?);?$/gm)) {
      const type = m[2].replace(/^Array<(\w+)>$/, '$1')
      fields.set(m[1], imports.has(type) ? dtsOf(imports.get(type), dts) : null)
    }
  }
  parsed.set(dts, fields)
  return fields
}

function walk(value, dts, path, out) {
  const fields = dts && fieldsOf(dts)
  if (!fields || value === null || typeof value !== 'object') return
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) walk(item, dts, `${path}[${i}]`, out)
    return
  }
  for (const [key, item] of Object.entries(value)) {
    if (!fields.has(key)) out.push(`${path}.${key}: unknown field`)
    else walk(item, fields.get(key), `${path}.${key}`, out)
  }
}

/** Paths of fields the model's type does not declare. `modelSpecifier`: e.g. kubernetes-models/apps/v1/Deployment. */
export function unknownFields(doc, modelSpecifier) {
  const out = []
  walk(doc, dtsOf(modelSpecifier), '', out)
  return out
}
