// Every setting a service reads, against the Settings section of docs/operations.md and the
// chart's `config`. Run with tsx (it imports each service's zod env schema):
//   tsx settings.mjs
// - each variable of services/<name>/src/env.ts (test hooks, TEST_*, aside) has a row, whose
//   "Read by" names exactly the services that read it (`all` for every one) and whose "Default"
//   is what the schema gives when nothing sets it (`required`, `none`, `empty` or a value in
//   backticks, parsed with the schema as the service would parse it);
// - a row naming a variable no service reads is stale, but for Node's own (`Read by` Node: its
//   default is the Dockerfile's) and MAILER_VERSION (read by the logger);
// - values.schema.json lets `config` take exactly the settings some service reads, and each
//   service's `env` those it reads (besides MAILER_VERSION and Node's own variables);
// - every key of `config` in values.yaml is a setting some service reads.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isDeepStrictEqual } from 'node:util'
import yaml from 'js-yaml'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const read = (p) => readFileSync(resolve(root, p), 'utf8')
const problems = []
const DOC = 'docs/operations.md'

/** name -> { services: [..], fields: Map(service -> zod field) } for every service's schema. */
const settings = new Map()
const services = readdirSync(resolve(root, 'services'), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort()
for (const service of services) {
  const mod = await import(resolve(root, `services/${service}/src/env.ts`))
  const schema = Object.values(mod).find((v) => v && typeof v === 'object' && v.shape)
  if (!schema) {
    problems.push(`services/${service}/src/env.ts exports no zod object schema`)
    continue
  }
  for (const [name, field] of Object.entries(schema.shape)) {
    if (name.startsWith('TEST_')) continue
    if (!settings.has(name)) settings.set(name, { services: [], fields: new Map() })
    settings.get(name).services.push(service)
    settings.get(name).fields.set(service, field)
  }
}

/** What a service takes when nothing sets the variable: { required } or { value }. */
function schemaDefault(field) {
  const r = field.safeParse(undefined)
  return r.success ? { value: r.data } : { required: true }
}

/** Variables read outside the env schemas, with where their default is written. */
const OUTSIDE = {
  MAILER_VERSION: () => {
    const m = /process\.env\.MAILER_VERSION \?\? '([^']*)'/.exec(read('libs/observability/src/logger.ts'))
    return m ? { value: m[1] } : undefined
  },
}
/** The Dockerfile's runtime ENV: the default of Node's own variables in the image. */
function imageEnv(name) {
  const text = read('Dockerfile').replace(/\\\n/g, ' ')
  const stage = text.slice(text.lastIndexOf('\nFROM '))
  for (const line of stage.split('\n').filter((l) => l.startsWith('ENV ')))
    for (const m of line.slice(4).matchAll(/(\w+)=(\S+)/g)) if (m[1] === name) return m[2]
  return undefined
}

// --- the doc's rows -------------------------------------------------------------------------
const text = read(DOC)
const start = text.indexOf('\n## Settings\n')
const end = text.indexOf('\n## ', start + 1)
if (start < 0) problems.push(`${DOC}: no "## Settings" section`)
const rows = new Map()
for (const line of start < 0 ? [] : text.slice(start, end).split('\n')) {
  if (!line.startsWith('| `')) continue
  const cells = line.split(' | ').map((c) => c.replace(/^\| ?| ?\|$/g, '').trim())
  const names = [...cells[0].matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1])
  for (const name of names) {
    if (rows.has(name)) problems.push(`${DOC}: ${name} has two rows in Settings`)
    rows.set(name, { readBy: cells[1] ?? '', dflt: cells[2] ?? '' })
  }
}

/** The documented default as the service would take it. */
function documented(dflt, field) {
  if (dflt === 'required') return { required: true }
  if (dflt === 'none') return { value: undefined }
  const raw = dflt === 'empty' ? '' : /^`([^`]*)`/.exec(dflt)?.[1]
  if (raw === undefined) return { unreadable: true }
  if (!field) return { value: raw }
  const r = field.safeParse(raw)
  return r.success ? { value: r.data } : { invalid: raw }
}

const show = (d) => (d.required ? 'required' : d.value === undefined ? 'none' : JSON.stringify(d.value))

for (const [name, s] of settings) {
  const row = rows.get(name)
  if (!row) {
    problems.push(`${name} (read by ${s.services.join(', ')}) is not in ${DOC}'s Settings, with its default`)
    continue
  }
  const readBy =
    row.readBy === 'all'
      ? services
      : row.readBy
          .split(',')
          .map((x) => x.trim())
          .sort()
  if (!isDeepStrictEqual(readBy, [...s.services].sort()))
    problems.push(`${DOC}: ${name} is read by ${s.services.join(', ')}, not "${row.readBy}"`)
  for (const [service, field] of s.fields) {
    const want = schemaDefault(field)
    const got = documented(row.dflt, field)
    if (got.unreadable)
      problems.push(`${DOC}: ${name}'s default "${row.dflt}" is not required, none, empty or \`value\``)
    else if (got.invalid !== undefined)
      problems.push(`${DOC}: ${name}'s default ${got.invalid} is refused by ${service}`)
    else if (!isDeepStrictEqual(got, want))
      problems.push(`${DOC}: ${name}'s default is "${row.dflt}", but ${service} takes ${show(want)}`)
  }
}
for (const [name, row] of rows) {
  if (settings.has(name)) continue
  if (row.readBy === 'Node') {
    const image = imageEnv(name)
    if (!name.startsWith('NODE_')) problems.push(`${DOC}: ${name} is no variable of Node's`)
    else if (image !== undefined && documented(row.dflt).value !== image)
      problems.push(`${DOC}: ${name}'s default is "${row.dflt}", but the image sets ${image}`)
  } else if (name in OUTSIDE) {
    const want = OUTSIDE[name]()
    if (!want) problems.push(`${name}: its default is no longer found where it is read`)
    else if (!isDeepStrictEqual(documented(row.dflt), want))
      problems.push(`${DOC}: ${name}'s default is "${row.dflt}", but it is ${show(want)}`)
  } else problems.push(`${DOC}: ${name} is in Settings, but no service reads it`)
}

// --- values.schema.json: the names `config` and each service's `env` take ------------------
// Each is a pattern "^(A|B|…)$" of settings beside one for Node's own variables: a setting a
// service reads that its `env` refuses cannot be set; one it does not read is a typo let through.
const valuesSchema = JSON.parse(read('helm/mailer/values.schema.json'))
const listed = (env) =>
  Object.keys(env?.patternProperties ?? {})
    .find((re) => !re.includes('NODE_[')) // not Node's own
    ?.replace(/^\^\(|\)\$$/g, '')
    .split('|') ?? []
function compare(place, got, want) {
  for (const n of want) if (!got.includes(n)) problems.push(`values.schema.json: ${place} refuses ${n}`)
  for (const n of got)
    if (!want.includes(n)) problems.push(`values.schema.json: ${place} takes ${n}, which it does not read`)
}
for (const service of services) {
  const env = valuesSchema.properties?.services?.properties?.[service]?.properties?.env
  const reads = [...settings].filter(([, s]) => s.services.includes(service)).map(([n]) => n)
  if (!env) problems.push(`values.schema.json: no services.${service}.env`)
  else compare(`services.${service}.env`, listed(env), [...reads, 'MAILER_VERSION'])
}
compare('config', listed(valuesSchema.properties?.config), [...settings.keys(), 'MAILER_VERSION'])

// --- values.yaml's config -----------------------------------------------------------------
const config = yaml.load(read('helm/mailer/values.yaml')).config ?? {}
for (const key of Object.keys(config))
  if (!settings.has(key)) problems.push(`helm/mailer/values.yaml: config.${key} is read by no service`)

if (problems.length) {
  console.error(`${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}`)
  process.exit(1)
}
console.log(
  `  ${settings.size} settings of ${services.length} services: each in ${DOC} with its readers and default`,
)
