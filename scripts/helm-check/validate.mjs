// Validates `helm template` output and the Grafana dashboard. Usage:
//   node validate.mjs [--external name,...] rendered.yaml...
// --external: Secrets/ConfigMaps the user creates (referenced but not rendered).
// Prints every problem and exits 1 if there is any.
import { readFileSync } from 'node:fs'
import { basename, dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import yaml from 'js-yaml'
import { unknownFields } from './fields.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const problems = []
const fail = (where, msg) => problems.push(`${where}: ${msg}`)

// Custom resources whose CRDs are not in kubernetes-models: checked by hand below.
const CRDS = new Set(['monitoring.coreos.com/v1/ServiceMonitor', 'monitoring.coreos.com/v1/PrometheusRule'])
const DNS_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/

const podSpecOf = (o) => (o.kind === 'Pod' ? o.spec : o.spec?.template?.spec)
const podLabelsOf = (o) => (o.kind === 'Pod' ? o.metadata.labels : o.spec?.template?.metadata?.labels) ?? {}
const matches = (selector, labels) => Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v)

async function validateObject(o, where) {
  if (!o.apiVersion || !o.kind || !o.metadata?.name)
    return fail(where, 'needs apiVersion, kind and metadata.name')
  const { name, labels = {} } = o.metadata
  if (name.length > (o.kind === 'Service' ? 63 : 253) || !DNS_NAME.test(name))
    fail(where, `invalid name "${name}"`)
  for (const [k, v] of Object.entries(labels)) {
    if (typeof v !== 'string' || v.length > 63 || !LABEL_VALUE.test(v))
      fail(where, `label ${k}: invalid value "${v}"`)
  }
  if (CRDS.has(`${o.apiVersion}/${o.kind}`)) return
  const specifier = `kubernetes-models/${o.apiVersion}/${o.kind}`
  let Model
  try {
    Model = (await import(specifier))[o.kind]
  } catch {
    return fail(where, `no Kubernetes schema for ${o.apiVersion} ${o.kind}`)
  }
  try {
    new Model(o).validate()
  } catch (err) {
    for (const e of err.errors ?? [err]) fail(where, `${e.instancePath ?? ''} ${e.message}`)
  }
  for (const path of unknownFields(o, specifier)) fail(where, path)
}

function checkServiceMonitor(o, where) {
  const eps = o.spec?.endpoints
  if (!Array.isArray(eps) || eps.length === 0 || eps.some((e) => !e.port))
    fail(where, 'spec.endpoints[].port required')
  if (!o.spec?.selector?.matchLabels) fail(where, 'spec.selector.matchLabels required')
}

function checkPrometheusRule(o, where) {
  const groups = o.spec?.groups
  if (!Array.isArray(groups) || groups.length === 0) return fail(where, 'spec.groups required')
  for (const g of groups) {
    for (const r of g.rules ?? []) {
      if (!(r.alert || r.record) || typeof r.expr !== 'string' || !r.expr.trim())
        fail(where, `rule needs alert/record and expr: ${JSON.stringify(r)}`)
      if (r.for && !/^\d+[smhd]$/.test(r.for)) fail(where, `${r.alert}: bad "for" ${r.for}`)
      let depth = 0
      for (const c of r.expr ?? '') depth += c === '(' || c === '{' ? 1 : c === ')' || c === '}' ? -1 : 0
      if (depth !== 0) fail(where, `${r.alert}: unbalanced brackets in expr`)
    }
  }
}

/** References between objects of one render: what a template names must exist. */
function checkReferences(objs, file, external) {
  const have = (kind, name) =>
    external.has(name) || objs.some((o) => o.kind === kind && o.metadata.name === name)
  const workloads = objs.filter((o) => podSpecOf(o))
  for (const o of objs) {
    const where = `${file} ${o.kind}/${o.metadata.name}`
    const spec = podSpecOf(o)
    if (spec) {
      for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
        for (const e of c.env ?? []) {
          const s = e.valueFrom?.secretKeyRef
          if (s && !have('Secret', s.name)) fail(where, `env ${e.name}: Secret ${s.name} is not rendered`)
        }
        for (const f of c.envFrom ?? []) {
          if (f.configMapRef && !have('ConfigMap', f.configMapRef.name))
            fail(where, `ConfigMap ${f.configMapRef.name} is not rendered`)
        }
        const ports = new Set((c.ports ?? []).map((p) => p.name))
        for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
          const port = c[probe]?.httpGet?.port
          if (typeof port === 'string' && !ports.has(port))
            fail(where, `${probe}: no container port named ${port}`)
        }
      }
      for (const v of spec.volumes ?? []) {
        if (v.configMap && !have('ConfigMap', v.configMap.name))
          fail(where, `volume ${v.name}: ConfigMap ${v.configMap.name} is not rendered`)
        if (v.secret && !have('Secret', v.secret.secretName))
          fail(where, `volume ${v.name}: Secret ${v.secret.secretName} is not rendered`)
      }
      // A mount of a volume the pod does not declare is refused by the API server.
      const volumes = new Set([
        ...(spec.volumes ?? []).map((v) => v.name),
        ...(o.spec.volumeClaimTemplates ?? []).map((t) => t.metadata.name),
      ])
      for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
        for (const m of c.volumeMounts ?? []) {
          if (!volumes.has(m.name))
            fail(where, `container ${c.name} mounts ${m.name}, which is not a volume of the pod`)
        }
        // Two mounts at one path, or two volumes of one name, are refused by the API server too.
        const paths = (c.volumeMounts ?? []).map((m) => m.mountPath.replace(/\/$/, ''))
        for (const p of new Set(paths.filter((p, i) => paths.indexOf(p) !== i)))
          fail(where, `container ${c.name} mounts two volumes at ${p}`)
      }
      const names = (spec.volumes ?? []).map((v) => v.name)
      for (const n of new Set(names.filter((n, i) => names.indexOf(n) !== i)))
        fail(where, `two volumes named ${n}`)
    }
    if (
      o.kind === 'Service' &&
      !workloads.some((w) => matches(o.spec.selector, podLabelsOf(w)) && w.kind !== 'Pod')
    ) {
      fail(where, 'selector matches no Deployment/StatefulSet')
    }
    if (
      o.kind === 'PodDisruptionBudget' &&
      !workloads.some((w) => matches(o.spec.selector.matchLabels, podLabelsOf(w)))
    ) {
      fail(where, 'selector matches no workload')
    }
    if (
      o.kind === 'HorizontalPodAutoscaler' &&
      !have(o.spec.scaleTargetRef.kind, o.spec.scaleTargetRef.name)
    ) {
      fail(where, `scale target ${o.spec.scaleTargetRef.name} is not rendered`)
    }
    if (o.kind === 'Ingress') {
      for (const rule of o.spec.rules ?? []) {
        for (const p of rule.http?.paths ?? []) {
          const { name, port } = p.backend.service
          const svc = objs.find((s) => s.kind === 'Service' && s.metadata.name === name)
          if (!svc) fail(where, `backend Service ${name} is not rendered`)
          else if (port.name && !svc.spec.ports.some((sp) => sp.name === port.name))
            fail(where, `Service ${name} has no port ${port.name}`)
        }
      }
    }
  }
  const seen = new Set()
  for (const o of objs) {
    const key = `${o.kind}/${o.metadata.name}`
    if (seen.has(key)) fail(file, `${key} rendered twice`)
    seen.add(key)
  }
}

/** Metric names a PromQL expression reads, without histogram suffixes. */
const metricNames = (expr) =>
  [...expr.matchAll(/\bmailer_[a-z0-9_]+/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, ''))

function checkDashboard(rendered) {
  const chartCopy = resolve(root, 'helm/mailer/dashboards/mailer.json')
  const deployCopy = resolve(root, 'deploy/grafana/mailer.json')
  const text = readFileSync(chartCopy, 'utf8')
  if (text !== readFileSync(deployCopy, 'utf8'))
    fail(
      'deploy/grafana/mailer.json',
      'differs from helm/mailer/dashboards/mailer.json (copy one onto the other)',
    )
  let dash
  try {
    dash = JSON.parse(text)
  } catch (err) {
    return fail('helm/mailer/dashboards/mailer.json', `not JSON: ${err.message}`)
  }
  if (!dash.title || !dash.uid || !Array.isArray(dash.panels))
    fail('dashboard', 'needs title, uid and panels')
  const ids = dash.panels.map((p) => p.id)
  if (new Set(ids).size !== ids.length) fail('dashboard', 'panel ids are not unique')
  const used = new Set()
  for (const p of dash.panels) {
    for (const t of p.targets ?? []) {
      if (!t.expr?.trim()) fail('dashboard', `panel "${p.title}" has an empty query`)
      for (const m of metricNames(t.expr ?? '')) used.add(m)
    }
  }
  // The rendered ConfigMap must carry the file as is (.Files.Get).
  for (const o of rendered.filter((o) => o.kind === 'ConfigMap' && o.data?.['mailer.json'])) {
    if (o.data['mailer.json'].trim() !== text.trim())
      fail(`ConfigMap/${o.metadata.name}`, 'mailer.json differs from the dashboard file')
  }
  for (const o of rendered.filter((o) => o.kind === 'PrometheusRule')) {
    for (const g of o.spec.groups) for (const r of g.rules) for (const m of metricNames(r.expr)) used.add(m)
  }
  const listPath = 'deploy/grafana/metrics-used.json'
  const listed = JSON.parse(readFileSync(resolve(root, listPath), 'utf8'))
  if (!Array.isArray(listed) || listed.some((n) => typeof n !== 'string'))
    return fail(listPath, 'must be an array of names')
  for (const n of used) if (!listed.includes(n)) fail(listPath, `${n} is queried but not listed`)
  for (const n of listed) if (!used.has(n)) fail(listPath, `${n} is listed but no panel or alert queries it`)
  if (!rendered.some((o) => o.kind === 'PrometheusRule'))
    fail('renders', 'no render enables the PrometheusRule: alert metrics unchecked')
}

/**
 * The delivery alert must count every outcome the dispatcher records that is not a recipient's
 * final answer: an outcome left out (a relay's quota answer is `retrying`) never raises it.
 */
function checkDeliveryOutcomes(rendered) {
  const src = readFileSync(resolve(root, 'services/dispatcher/src/domain/outcome.ts'), 'utf8')
  const type = /export type Outcome = ([^\n]+)/.exec(src)?.[1] ?? ''
  const outcomes = [...type.matchAll(/'([a-z_]+)'/g)].map((m) => m[1])
  if (outcomes.length === 0) return fail('outcome.ts', 'no `export type Outcome` to read')
  // Delivered, refused for good by the recipient's server, or not sent because the address is on
  // the suppression list (`rejected`): none of them is the deployment's trouble.
  const settled = new Set(['delivered', 'bounced', 'rejected'])
  for (const o of rendered.filter((o) => o.kind === 'PrometheusRule')) {
    const rule = o.spec.groups.flatMap((g) => g.rules).find((r) => r.alert === 'MailerDeliveryFailureRate')
    const re = /mailer_dispatcher_deliveries_total\{[^}]*outcome=~"([^"]+)"/.exec(rule?.expr ?? '')?.[1]
    if (!re) {
      fail(`PrometheusRule/${o.metadata.name}`, 'MailerDeliveryFailureRate: no outcome=~"…" to check')
      continue
    }
    const counted = new RegExp(`^(?:${re})$`)
    for (const out of outcomes) {
      if (settled.has(out) === counted.test(out))
        fail(
          `PrometheusRule/${o.metadata.name}`,
          `MailerDeliveryFailureRate ${settled.has(out) ? 'counts' : 'leaves out'} outcome "${out}"`,
        )
    }
  }
}

const args = process.argv.slice(2)
const external = new Set()
const files = []
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--external') for (const n of args[++i].split(',')) external.add(n)
  else files.push(args[i])
}
const all = []
for (const file of files) {
  const objs = yaml.loadAll(readFileSync(file, 'utf8')).filter((d) => d && typeof d === 'object')
  if (objs.length === 0) fail(file, 'rendered nothing')
  for (const o of objs) {
    const where = `${basename(file)} ${o.kind}/${o.metadata?.name}`
    await validateObject(o, where)
    if (o.kind === 'ServiceMonitor') checkServiceMonitor(o, where)
    if (o.kind === 'PrometheusRule') checkPrometheusRule(o, where)
  }
  try {
    checkReferences(objs, basename(file), external)
  } catch (err) {
    fail(basename(file), `reference check crashed on a malformed object: ${err.message}`)
  }
  all.push(...objs)
  console.log(`  ${basename(file)}: ${objs.length} objects`)
}
checkDashboard(all)
checkDeliveryOutcomes(all)

if (problems.length) {
  console.error(`${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}`)
  process.exit(1)
}
console.log('  every object valid; dashboard, its chart copy and metrics-used.json agree')
