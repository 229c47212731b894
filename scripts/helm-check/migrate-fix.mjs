// docs/operations.md (Upgrade) settles a migration by hand with `fix`, a `kubectl run` whose
// overrides copy DATABASE_URL's Secret reference, the database CA's volume and the security
// contexts from the release's gateway Deployment. This runs that very block (bash) against each
// rendered chart, with a stand-in `kubectl` answering its jsonpath queries from the render and
// recording the `run`, then judges the Pod `kubectl run` would create with those overrides:
// valid for Kubernetes (kubernetes-models), DATABASE_URL from a Secret (never the URL itself in
// the spec; the bundled database's built from its password's Secret, as the services do), and the
// database CA mounted as the migration Job mounts it. Usage:
//   node migrate-fix.mjs rendered.yaml...
import { execFileSync } from 'node:child_process'
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import yaml from 'js-yaml'
import { Pod } from 'kubernetes-models/v1'

const here = dirname(fileURLToPath(import.meta.url))
const root = resolve(here, '../..')
const problems = []
const fail = (where, msg) => problems.push(`${where}: ${msg}`)

// The block as a reader copies it: the ```sh fence holding `fix() {`, the list's indent removed.
const docs = readFileSync(resolve(root, 'docs/operations.md'), 'utf8')
const block = [...docs.matchAll(/^( *)```sh\n([\s\S]*?)^\1```$/gm)].find((m) => m[2].includes('fix() {'))
if (!block) {
  console.error('docs/operations.md: no ```sh block defining fix()')
  process.exit(1)
}
const indent = block[1].length
const script = block[2]
  .split('\n')
  .map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length)))
  .join('\n')

// The stand-in kubectl: `get deploy <name> -o jsonpath={…}` from $RENDER, `run …` recorded in $RUN.
const dir = mkdtempSync(join(tmpdir(), 'helm-check-fix-'))
process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
writeFileSync(
  join(dir, 'kubectl'),
  `#!/usr/bin/env node
const fs = require('node:fs')
const args = process.argv.slice(2)
if (args.includes('run')) {
  fs.writeFileSync(process.env.RUN, JSON.stringify(args))
  process.exit(0)
}
const name = args[args.indexOf('deploy') + 1]
const expr = args.map((a) => a.replace(/^-o=?/, '')).find((a) => a.startsWith('jsonpath=')) ?? ''
const path = /^jsonpath=\\{(.*)\\}$/.exec(expr)?.[1]
const objs = JSON.parse(fs.readFileSync(process.env.RENDER, 'utf8'))
let v = objs.find((o) => o.kind === 'Deployment' && o.metadata.name === name)
if (!v || !path) { console.error('stand-in kubectl: cannot answer ' + args.join(' ')); process.exit(1) }
for (const step of path.match(/\\.[A-Za-z]+|\\[\\d+\\]|\\[\\?\\(@\\.name=="[^"]+"\\)\\]/g)) {
  if (v === undefined) break
  if (step.startsWith('.')) v = v[step.slice(1)]
  else if (/^\\[\\d+\\]$/.test(step)) v = v[Number(step.slice(1, -1))]
  else v = (v ?? []).filter((x) => x.name === /"([^"]+)"/.exec(step)[1])
}
const out = (x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))
if (Array.isArray(v)) process.stdout.write(v.map(out).join(' '))
else if (v !== undefined) process.stdout.write(out(v))
`,
)
chmodSync(join(dir, 'kubectl'), 0o755)

/** The Pod `kubectl run NAME --image … --restart=Never -i -- ARGS` makes, its overrides merged
 * strategically (containers by name, the rest of `spec` key by key). */
function runPod(args) {
  const name = args[args.indexOf('run') + 1]
  const opt = (flag) => args.find((a) => a.startsWith(`--${flag}=`))?.slice(flag.length + 3)
  const command = args.slice(args.indexOf('--') + 1)
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { run: name } },
    spec: {
      restartPolicy: 'Never',
      containers: [{ name, image: opt('image'), args: command, stdin: true, stdinOnce: true }],
    },
  }
  // --env=NAME=value goes into the container's env as written.
  const env = args
    .slice(0, args.indexOf('--'))
    .filter((a) => a.startsWith('--env='))
    .map((a) => a.slice(6))
    .map((e) => ({ name: e.slice(0, e.indexOf('=')), value: e.slice(e.indexOf('=') + 1) }))
  if (env.length) pod.spec.containers[0].env = env
  const overrides = JSON.parse(opt('overrides'))
  for (const [k, v] of Object.entries(overrides.spec ?? {})) {
    if (k !== 'containers') pod.spec[k] = v
    else
      for (const c of v) {
        const same = pod.spec.containers.find((x) => x.name === c.name)
        if (same) Object.assign(same, c, { env: [...(same.env ?? []), ...(c.env ?? [])] })
        else pod.spec.containers.push(c)
      }
  }
  return pod
}

for (const path of process.argv.slice(2)) {
  const file = basename(path)
  const before = problems.length
  const objs = yaml.loadAll(readFileSync(path, 'utf8')).filter((d) => d && typeof d === 'object')
  const gateway = objs.find((o) => o.kind === 'Deployment' && o.metadata.name.endsWith('-gateway'))
  const job = objs.find((o) => o.kind === 'Job')
  if (!gateway || !job) {
    fail(file, 'no gateway Deployment or migration Job rendered')
    continue
  }
  const render = join(dir, 'render.json')
  const run = join(dir, 'run.json')
  rmSync(run, { force: true })
  writeFileSync(render, JSON.stringify(objs))
  const image = gateway.spec.template.spec.containers[0].image
  const body = script
    .replaceAll('<repository>:<tag>', image)
    .replace(/^ns=\S+ deploy=\S+ /m, `ns=mailer deploy=${gateway.metadata.name} `)
    .split('\n')
    .filter((l) => !/^fix .*</.test(l))
    .join('\n')
  try {
    execFileSync('bash', ['-euo', 'pipefail', '-c', body], {
      env: { ...process.env, PATH: `${dir}:${process.env.PATH}`, RENDER: render, RUN: run },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
  } catch (err) {
    fail(file, `the fix() block failed: ${err.stderr?.toString().trim() || err.message}`)
    continue
  }
  let pod
  try {
    pod = runPod(JSON.parse(readFileSync(run, 'utf8')))
  } catch (err) {
    fail(file, `kubectl run's --overrides is not JSON: ${err.message}`)
    continue
  }
  try {
    new Pod(pod).validate()
  } catch (err) {
    fail(file, `the fix pod is not a valid Pod: ${err.message}`)
  }
  const c = pod.spec.containers[0]
  const env = c.env ?? []
  const url = env.find((e) => e.name === 'DATABASE_URL')
  if (!url) fail(file, 'the fix pod has no DATABASE_URL')
  else if (url.value !== undefined) {
    // Only the bundled database's, built in the pod from its password's Secret.
    const refs = [...url.value.matchAll(/\$\(([A-Z_]+)\)/g)].map((m) => m[1])
    const before = env.slice(0, env.indexOf(url))
    if (refs.length === 0) fail(file, 'DATABASE_URL is written into the Pod spec, password and all')
    for (const r of refs)
      if (!before.some((e) => e.name === r && e.valueFrom?.secretKeyRef))
        fail(file, `DATABASE_URL uses $(${r}), which no Secret reference before it gives`)
  } else if (!url.valueFrom?.secretKeyRef) fail(file, 'DATABASE_URL is not read from a Secret')
  // The CA as the migration Job mounts it (externalDatabase.tlsCA), or none.
  const jobSpec = job.spec.template.spec
  const jobMount = jobSpec.containers[0].volumeMounts?.find((m) => m.name === 'postgresql-ca')
  const mount = c.volumeMounts?.find((m) => m.name === 'postgresql-ca')
  const volumeOf = (spec) => JSON.stringify(spec.volumes?.find((v) => v.name === 'postgresql-ca') ?? null)
  if (jobMount?.mountPath !== mount?.mountPath || volumeOf(jobSpec) !== volumeOf(pod.spec))
    fail(
      file,
      `the database CA: the Job mounts ${volumeOf(jobSpec)} at ${jobMount?.mountPath}, the fix pod ${volumeOf(pod.spec)} at ${mount?.mountPath}`,
    )
  if (pod.spec.securityContext?.runAsNonRoot !== true) fail(file, 'the fix pod may run as root')
  if (problems.length === before)
    console.log(
      `  ${file}: kubectl run ${pod.metadata.name} would read DATABASE_URL from a Secret${mount ? ', the CA mounted' : ''}`,
    )
}

if (problems.length) {
  console.error(`${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}`)
  process.exit(1)
}
console.log("  docs/operations.md's fix() makes a valid Pod reading the database as the migration Job does")
