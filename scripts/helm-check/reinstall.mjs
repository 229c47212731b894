// A reinstall after `helm uninstall` keeps the generated keys: the chart's own Secret (and the
// bundled PostgreSQL's) must carry `helm.sh/resource-policy: keep`, and an install that finds it
// must render the same ADMIN_API_KEY and TRACKING_SECRET again (`lookup`), as a new
// TRACKING_SECRET breaks every tracking and unsubscribe link already sent. Usage:
//   node reinstall.mjs <helm> <chart>
// `lookup` needs a cluster: helm installs with --dry-run=server against a stand-in for the
// Kubernetes API here (discovery, and the kept Secrets as a `helm uninstall` leaves them: with
// Helm's ownership labels, which let the new release adopt them). Nothing is created anywhere.
// Also: the Deployments' checksum/secret is the same whether the generated keys are drawn (a first
// install) or read back (an upgrade), and changes with a value given under `secrets`.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import yaml from 'js-yaml'

const [helm, chart] = process.argv.slice(2)
const NS = 'mailer'
const RELEASE = 'mailer'
const problems = []
const fail = (msg) => problems.push(msg)
const b64 = (s) => Buffer.from(s).toString('base64')

/** What the previous release generated, left in the cluster by `helm uninstall`. */
const KEPT = {
  ADMIN_API_KEY: 'kept-admin-key-0123456789abcdefghij',
  TRACKING_SECRET: 'kept-tracking-secret-0123456789',
}
const kept = {
  [RELEASE]: { ...Object.fromEntries(Object.entries(KEPT).map(([k, v]) => [k, b64(v)])) },
  [`${RELEASE}-postgresql`]: { password: b64('kept-postgres-password') },
}

// API groups the chart's objects belong to (their kinds must map to resources).
const GROUPS = {
  v1: ['Secret', 'ConfigMap', 'Service', 'Pod'],
  'apps/v1': ['Deployment', 'StatefulSet'],
  'batch/v1': ['Job'],
  'networking.k8s.io/v1': ['NetworkPolicy', 'Ingress'],
  'policy/v1': ['PodDisruptionBudget'],
  'autoscaling/v2': ['HorizontalPodAutoscaler'],
}
const resources = (gv) =>
  GROUPS[gv].map((kind) => ({
    name: `${kind.toLowerCase().replace(/y$/, 'ie').replace(/s$/, 'se')}s`,
    singularName: kind.toLowerCase(),
    namespaced: true,
    kind,
    verbs: ['get', 'list', 'create'],
  }))
const groups = Object.keys(GROUPS).filter((gv) => gv.includes('/'))

const server = createServer((req, res) => {
  const path = new URL(req.url, 'http://api').pathname
  const answer = (code, body) => {
    res.writeHead(code, { 'content-type': 'application/json' })
    res.end(JSON.stringify(body))
  }
  if (path === '/version') return answer(200, { major: '1', minor: '31', gitVersion: 'v1.31.0' })
  if (path === '/api') return answer(200, { kind: 'APIVersions', versions: ['v1'] })
  if (path === '/apis') {
    const list = groups.map((gv) => {
      const [name, version] = gv.split('/')
      return {
        name,
        versions: [{ groupVersion: gv, version }],
        preferredVersion: { groupVersion: gv, version },
      }
    })
    return answer(200, { kind: 'APIGroupList', apiVersion: 'v1', groups: list })
  }
  const gv = path === '/api/v1' ? 'v1' : /^\/apis\/([^/]+\/[^/]+)$/.exec(path)?.[1]
  if (gv && GROUPS[gv])
    return answer(200, { kind: 'APIResourceList', groupVersion: gv, resources: resources(gv) })
  const secret = new RegExp(`^/api/v1/namespaces/${NS}/secrets/([^/]+)$`).exec(path)?.[1]
  if (req.method === 'GET' && secret && kept[secret])
    return answer(200, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: secret,
        namespace: NS,
        labels: { 'app.kubernetes.io/managed-by': 'Helm' },
        annotations: {
          'meta.helm.sh/release-name': RELEASE,
          'meta.helm.sh/release-namespace': NS,
          'helm.sh/resource-policy': 'keep',
        },
      },
      type: 'Opaque',
      data: kept[secret],
    })
  answer(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 })
})
await new Promise((r) => server.listen(0, '127.0.0.1', r))

/**
 * `helm template` as an install against the stand-in (or, with `cluster` false, without a cluster,
 * where `lookup` finds nothing, as on a first install); its stdout.
 */
function render(args, { cluster = true } = {}) {
  // An empty kubeconfig: the user's own is never read, nor its credentials sent here.
  const dir = mkdtempSync(join(tmpdir(), 'helm-check-kube-'))
  writeFileSync(join(dir, 'config'), '')
  const api = cluster && `http://127.0.0.1:${server.address().port}`
  const flags = cluster ? ['--dry-run=server', '--disable-openapi-validation', '--kube-apiserver', api] : []
  const p = spawn(helm, ['template', RELEASE, chart, '--namespace', NS, ...flags, ...args], {
    env: { ...process.env, KUBECONFIG: join(dir, 'config') },
  })
  let out = ''
  let err = ''
  p.stdout.on('data', (d) => {
    out += d
  })
  p.stderr.on('data', (d) => {
    err += d
  })
  return new Promise((resolve) =>
    p.once('close', (code) => {
      rmSync(dir, { recursive: true, force: true })
      if (code !== 0) fail(`helm template ${args.join(' ')} against the stand-in failed: ${err.trim()}`)
      resolve(out)
    }),
  )
}

const objs = yaml.loadAll(await render([])).filter((d) => d && typeof d === 'object')
server.close()

// The pods' checksum/secret must not follow the generated keys: a first install draws them at
// random (no Secret to read back yet) in every include, so a checksum of the rendered Secret
// differed from the next upgrade's (the stored keys read back) and that upgrade rolled every
// Deployment for nothing. A value given under `secrets` must still change it (the pods roll).
const checksums = (docs) => [
  ...new Set(
    docs
      .filter((o) => o?.kind === 'Deployment')
      .map((o) => o.spec.template.metadata.annotations?.['checksum/secret']),
  ),
]
const plain = async (args) => checksums(yaml.loadAll(await render(args, { cluster: false })))
const upgrade = checksums(objs)
const [first, again] = [await plain([]), await plain([])]
if (upgrade.length !== 1 || upgrade.some((c) => !c))
  fail(`the Deployments' checksum/secret differ or are missing: ${upgrade.join(', ')}`)
else if (first.join() !== upgrade.join() || again.join() !== upgrade.join())
  fail(
    `checksum/secret follows the generated keys: ${first} and ${again} on first installs, ${upgrade} on an upgrade reading them back (every pod rolls at the first upgrade)`,
  )
for (const key of Object.keys(KEPT)) {
  const given = await plain(['--set-string', `secrets.${key}.value=${'x'.repeat(40)}`])
  if (given.join() === upgrade.join())
    fail(`checksum/secret ignores secrets.${key}.value: changing it rolls no pod`)
}
const secretNamed = (name) => objs.find((o) => o.kind === 'Secret' && o.metadata.name === name)
for (const name of Object.keys(kept)) {
  const s = secretNamed(name)
  if (!s) {
    if (!problems.length) fail(`Secret/${name} is not rendered`)
    continue
  }
  if (s.metadata.annotations?.['helm.sh/resource-policy'] !== 'keep')
    fail(`Secret/${name} has no helm.sh/resource-policy: keep, so helm uninstall deletes it`)
  for (const [key, value] of Object.entries(kept[name])) {
    if (s.data?.[key] !== value)
      fail(`Secret/${name}: ${key} is not the kept one read back (a reinstall would generate a new one)`)
  }
}

if (problems.length) {
  console.error(`${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}`)
  process.exit(1)
}
console.log(
  `  ${Object.keys(kept).join(' and ')} are kept on uninstall, and a reinstall reads ${Object.keys(KEPT).join(', ')} and the password back`,
)
console.log(
  '  checksum/secret is the same on a first install and an upgrade (generated keys left out), and follows given values',
)
