// PostgreSQL connections: what the services open, what docs/operations.md tells operators, and
// whether the chart's own PostgreSQL accepts what its default values open. Usage:
//   node db-connections.mjs default.yaml production.yaml
// Per replica, a service holds at most its Prisma pool (startRuntime's dbPoolSize, else the
// runtime's default) plus every plain pg pool it makes (createPgPool's max, else its default),
// read from the services' sources. The Scaling section's table must give each service that sum,
// and its total rows what the default values (replicas) and values-production.yaml (HPA minimum
// to maximum, else replicas) add up to; the default values' total must fit the bundled
// PostgreSQL's max_connections. A pool added to a service (the email service's tracking pool)
// without the table following it fails here.
import { readdirSync, readFileSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import yaml from 'js-yaml'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const problems = []
const read = (p) => readFileSync(resolve(root, p), 'utf8')

/** A default written as `opts.<name> ?? <n>` in a library's source. */
function libraryDefault(path, name) {
  const m = new RegExp(`opts\\.${name} \\?\\? (\\d+)`).exec(read(path))
  if (!m) throw new Error(`${path}: no "opts.${name} ?? <n>" default found`)
  return Number(m[1])
}
const PRISMA_DEFAULT = libraryDefault('libs/bus/src/runtime.ts', 'dbPoolSize')
const PG_DEFAULT = libraryDefault('libs/db/src/pg-pool.ts', 'max')

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name)
    if (e.isDirectory()) return sources(p)
    return /\.ts$/.test(e.name) && !/\.test\.ts$/.test(e.name) ? [p] : []
  })
}

/** Connections one replica of `service` may hold, and what they are made of. */
function poolsOf(service) {
  const parts = []
  for (const file of sources(resolve(root, `services/${service}/src`))) {
    const text = readFileSync(file, 'utf8')
    const where = file.slice(root.length + 1)
    for (const m of text.matchAll(/startRuntime\(([^)]*)\)/g)) {
      const size = /dbPoolSize:\s*([^\s,}]+)/.exec(m[1])?.[1]
      if (size !== undefined && !/^\d+$/.test(size))
        problems.push(`${where}: dbPoolSize ${size} is not a number`)
      parts.push({ what: 'Prisma', n: size === undefined ? PRISMA_DEFAULT : Number(size) })
    }
    for (const m of text.matchAll(/createPgPool\(([^)]*)\)/g)) {
      const max = /\bmax:\s*([^\s,}]+)/.exec(m[1])?.[1]
      if (max !== undefined && !/^\d+$/.test(max))
        problems.push(`${where}: createPgPool max ${max} is not a number`)
      parts.push({ what: 'pg', n: max === undefined ? PG_DEFAULT : Number(max) })
    }
    // Anything else that connects must be counted here before it ships.
    for (const m of text.matchAll(/\b(createDb|new pg\.Client|new pg\.Pool|new Client|new Pool)\(/g))
      problems.push(`${where}: ${m[1]}( opens connections this check does not count`)
  }
  if (!parts.some((p) => p.what === 'Prisma'))
    problems.push(`services/${service}: no startRuntime call found`)
  return parts.reduce((sum, p) => sum + p.n, 0)
}

const objsOf = (path) => yaml.loadAll(readFileSync(path, 'utf8')).filter((d) => d && typeof d === 'object')
const component = (o) => o.metadata.labels?.['app.kubernetes.io/component']

/** Replicas of each service in a render: [minimum, maximum] (an HPA's range, else replicas). */
function replicasIn(objs) {
  const out = new Map()
  for (const d of objs.filter((o) => o.kind === 'Deployment')) {
    const hpa = objs.find(
      (o) => o.kind === 'HorizontalPodAutoscaler' && o.spec.scaleTargetRef.name === d.metadata.name,
    )
    out.set(
      component(d),
      hpa ? [hpa.spec.minReplicas ?? 1, hpa.spec.maxReplicas] : [d.spec.replicas ?? 1, d.spec.replicas ?? 1],
    )
  }
  return out
}

/** The rows of the Scaling section's connections table: first cell -> second cell. */
function docTable() {
  const text = read('docs/operations.md')
  const start = text.indexOf('| Service | PostgreSQL connections per replica |')
  if (start < 0) {
    problems.push('docs/operations.md: no table headed "| Service | PostgreSQL connections per replica |"')
    return new Map()
  }
  const rows = new Map()
  for (const line of text.slice(start).split('\n').slice(2)) {
    if (!line.startsWith('|')) break
    const [name, count] = line
      .split('|')
      .slice(1)
      .map((c) => c.trim())
    rows.set(name.replace(/\*/g, ''), count)
  }
  return rows
}

const [defaultPath, productionPath] = process.argv.slice(2)
const defaults = objsOf(defaultPath)
const perReplica = new Map([...replicasIn(defaults).keys()].map((s) => [s, poolsOf(s)]))
const rows = docTable()

for (const [service, n] of perReplica) {
  const documented = rows.get(service)
  if (documented === undefined)
    problems.push(`docs/operations.md's connections table has no row for ${service} (${n})`)
  else if (Number.parseInt(documented, 10) !== n)
    problems.push(
      `docs/operations.md says ${service} opens ${documented} connections per replica; its pools add up to ${n}`,
    )
}
for (const name of rows.keys())
  if (!perReplica.has(name) && !/^(default values|values-production\.yaml)/.test(name))
    problems.push(`docs/operations.md's connections table has a row "${name}", which is no service`)

/** [min, max] connections of a render's services. */
function total(objs) {
  let min = 0
  let max = 0
  for (const [service, [lo, hi]] of replicasIn(objs)) {
    min += lo * (perReplica.get(service) ?? 0)
    max += hi * (perReplica.get(service) ?? 0)
  }
  return [min, max]
}
const [defaultTotal] = total(defaults)
const [prodMin, prodMax] = total(objsOf(productionPath))
const rowFor = (prefix) => [...rows].find(([k]) => k.startsWith(prefix))?.[1] ?? '(no row)'
if (Number.parseInt(rowFor('default values'), 10) !== defaultTotal)
  problems.push(
    `docs/operations.md gives the default values ${rowFor('default values')} connections; they open ${defaultTotal}`,
  )
const prodDoc = rowFor('values-production.yaml').match(/\d+/g)?.map(Number) ?? []
if (prodDoc[0] !== prodMin || prodDoc.at(-1) !== prodMax)
  problems.push(
    `docs/operations.md gives values-production.yaml ${rowFor('values-production.yaml')} connections; it opens ${prodMin} to ${prodMax}`,
  )

// The chart's comments that give the default values' total.
for (const file of ['helm/mailer/values.yaml', 'helm/mailer/charts/postgresql/values.yaml']) {
  for (const m of read(file).matchAll(/open up to (\d+) with one\s*(?:#\s*)?replica each/g))
    if (Number(m[1]) !== defaultTotal)
      problems.push(
        `${file} says the services open up to ${m[1]} with one replica each; they open ${defaultTotal}`,
      )
}

// The bundled server takes what the default values open (PostgreSQL's own default is 100).
const pg = defaults.find((o) => o.kind === 'StatefulSet' && /postgresql$/.test(o.metadata.name))
if (!pg) problems.push(`${basename(defaultPath)}: no bundled PostgreSQL`)
else {
  const args = (pg.spec.template.spec.containers[0].args ?? []).join(' ')
  const maxConnections = Number(/max_connections=(\d+)/.exec(args)?.[1] ?? 100)
  if (defaultTotal > maxConnections)
    problems.push(
      `the default values open ${defaultTotal} connections; the bundled PostgreSQL takes ${maxConnections}`,
    )
  console.log(`  bundled PostgreSQL: max_connections ${maxConnections}`)
}

console.log(
  `  per replica: ${[...perReplica].map(([s, n]) => `${s} ${n}`).join(', ')}; default values ${defaultTotal}, values-production.yaml ${prodMin} to ${prodMax}`,
)
if (problems.length) {
  console.error(`${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}`)
  process.exit(1)
}
console.log('  docs/operations.md gives every service its connections and the totals')
