// externalNats.tls in a rendered chart. Usage:
//   node nats-tls.mjs rendered.yaml <ca> <client>
//     <ca>:     (secret|configMap):<name>:<key>, or none
//     <client>: secret:<name>:<certKey>:<keyKey>, or none
// Every pod that connects to NATS (each service's Deployment and the helm test Pod) has the CA as
// volume nats-ca, its key as ca.crt, mounted read-only at /etc/mailer/nats-ca, and the client
// certificate as volume nats-client-cert (tls.crt, tls.key) at /etc/mailer/nats-client; each
// service gets NATS_TLS_CA_FILE, NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE naming those files. The
// migration Job, which does not connect to NATS, has none of it; unset, no pod has any. (pod-env.mjs
// checks that the services start with them and that the test pod's nats CLI flags name them.)
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import yaml from 'js-yaml'

const [path, caArg, clientArg] = process.argv.slice(2)
const file = basename(path)
const problems = []
const objs = yaml.loadAll(readFileSync(path, 'utf8')).filter((d) => d && typeof d === 'object')

/** What each volume must hold: its source, the key -> path items, and where it is mounted. */
const expected = []
if (caArg !== 'none') {
  const [kind, name, key] = caArg.split(':')
  expected.push({
    volume: 'nats-ca',
    kind,
    name,
    items: [{ key, path: 'ca.crt' }],
    dir: '/etc/mailer/nats-ca',
    env: { NATS_TLS_CA_FILE: '/etc/mailer/nats-ca/ca.crt' },
  })
}
if (clientArg !== 'none') {
  const [kind, name, certKey, keyKey] = clientArg.split(':')
  expected.push({
    volume: 'nats-client-cert',
    kind,
    name,
    items: [
      { key: certKey, path: 'tls.crt' },
      { key: keyKey, path: 'tls.key' },
    ],
    dir: '/etc/mailer/nats-client',
    env: {
      NATS_TLS_CERT_FILE: '/etc/mailer/nats-client/tls.crt',
      NATS_TLS_KEY_FILE: '/etc/mailer/nats-client/tls.key',
    },
  })
}
const ALL_VOLUMES = ['nats-ca', 'nats-client-cert']
const ALL_ENV = ['NATS_TLS_CA_FILE', 'NATS_TLS_CERT_FILE', 'NATS_TLS_KEY_FILE']

const pods = objs.filter((o) => o.kind === 'Deployment' || o.kind === 'Job' || o.kind === 'Pod')
if (!pods.some((o) => o.kind === 'Deployment')) problems.push('no Deployment rendered')
if (!pods.some((o) => o.kind === 'Pod')) problems.push('no helm test Pod rendered')

for (const o of pods) {
  const where = `${o.kind}/${o.metadata.name}`
  const spec = o.kind === 'Pod' ? o.spec : o.spec.template.spec
  // The test Pod's NATS container only (its other container calls the gateway over HTTP).
  const containers =
    o.kind === 'Pod'
      ? spec.containers.filter((c) => (c.args ?? []).join(' ').includes('nats '))
      : spec.containers
  const connects = o.kind !== 'Job'
  const want = connects ? expected : []
  for (const v of ALL_VOLUMES.filter((n) => !want.some((w) => w.volume === n))) {
    if ((spec.volumes ?? []).some((x) => x.name === v)) problems.push(`${where}: has volume ${v}`)
    for (const c of spec.containers)
      if ((c.volumeMounts ?? []).some((m) => m.name === v)) problems.push(`${where} ${c.name}: mounts ${v}`)
  }
  for (const w of want) {
    const volume = (spec.volumes ?? []).find((v) => v.name === w.volume)
    const source = volume?.[w.kind]
    const sourceName = w.kind === 'secret' ? source?.secretName : source?.name
    if (sourceName !== w.name) problems.push(`${where}: no volume ${w.volume} from ${w.kind} ${w.name}`)
    else if (JSON.stringify(source.items) !== JSON.stringify(w.items))
      problems.push(`${where}: volume ${w.volume} does not map ${JSON.stringify(w.items)}`)
    for (const c of containers) {
      const m = (c.volumeMounts ?? []).find((m) => m.name === w.volume)
      if (m?.mountPath !== w.dir || m.readOnly !== true)
        problems.push(`${where} ${c.name}: ${w.volume} not mounted read-only at ${w.dir}`)
    }
  }
  if (o.kind === 'Pod') continue
  const wantEnv = Object.assign({}, ...want.map((w) => w.env))
  for (const c of containers) {
    for (const name of ALL_ENV) {
      const value = (c.env ?? []).find((e) => e.name === name)?.value
      if (value !== wantEnv[name])
        problems.push(
          `${where} ${c.name}: ${name} is ${value ?? '(unset)'}, not ${wantEnv[name] ?? '(unset)'}`,
        )
    }
  }
}

if (problems.length) {
  console.error(`${file}: ${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}`)
  process.exit(1)
}
const what = expected.map((w) => `${w.volume} from ${w.kind} ${w.name}`).join(' and ')
console.log(
  `  ${file}: ${what ? `services and the test pod mount ${what} read-only` : 'no pod has NATS TLS files'}`,
)
