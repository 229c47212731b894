// externalDatabase.tlsCA in a rendered chart. Usage:
//   node db-ca.mjs rendered.yaml (secret|configMap):<name>:<key>   the option set
//   node db-ca.mjs rendered.yaml none                              the option unset
// Set: every pod that connects to PostgreSQL (each service's Deployment and the migration Job)
// has the CA as volume postgresql-ca, from that Secret or ConfigMap, its key as ca.crt, mounted
// read-only at /etc/mailer/postgresql-ca, where DATABASE_URL's sslrootcert points. Unset: no pod
// has it. (pod-env.mjs checks that a URL given as a value names a file a mount provides.)
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import yaml from 'js-yaml'

const DIR = '/etc/mailer/postgresql-ca'
const [path, expected] = process.argv.slice(2)
const file = basename(path)
const [kind, name, key] = expected === 'none' ? [] : expected.split(':')
const problems = []
const objs = yaml.loadAll(readFileSync(path, 'utf8')).filter((d) => d && typeof d === 'object')
const workloads = objs.filter((o) => o.kind === 'Deployment' || o.kind === 'Job')
if (!workloads.some((o) => o.kind === 'Job')) problems.push('no migration Job rendered')
if (!workloads.some((o) => o.kind === 'Deployment')) problems.push('no Deployment rendered')

for (const o of workloads) {
  const where = `${o.kind}/${o.metadata.name}`
  const spec = o.spec.template.spec
  const volume = (spec.volumes ?? []).find((v) => v.name === 'postgresql-ca')
  const mounts = spec.containers.map((c) => (c.volumeMounts ?? []).find((m) => m.name === 'postgresql-ca'))
  if (!kind) {
    if (volume || mounts.some(Boolean)) problems.push(`${where}: has the database CA with the option unset`)
    continue
  }
  const source = volume?.[kind]
  const sourceName = kind === 'secret' ? source?.secretName : source?.name
  if (sourceName !== name) problems.push(`${where}: no volume postgresql-ca from ${kind} ${name}`)
  else if (JSON.stringify(source.items) !== JSON.stringify([{ key, path: 'ca.crt' }]))
    problems.push(`${where}: volume postgresql-ca does not map key ${key} to ca.crt`)
  spec.containers.forEach((c, i) => {
    const m = mounts[i]
    if (m?.mountPath !== DIR || m.readOnly !== true)
      problems.push(`${where} container ${c.name}: postgresql-ca not mounted read-only at ${DIR}`)
  })
}

if (problems.length) {
  console.error(`${file}: ${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}`)
  process.exit(1)
}
console.log(
  `  ${file}: ${kind ? `${workloads.length} pods mount ${kind} ${name} read-only` : 'no pod has a database CA'}`,
)
