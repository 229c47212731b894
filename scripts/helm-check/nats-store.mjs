// The bundled NATS's JetStream file store against the streams Mailer creates. Run with tsx (it
// imports the stream definitions from libs/contracts):
//   tsx nats-store.mjs rendered.yaml...
// In every render with the bundled NATS, its config must set max_file_store as plain bytes (no
// suffix to be read differently: nats-server takes "2G" as 10^9 but "2GB" as 2^30, and no
// fraction), to 75 % of the volume the StatefulSet claims. Left unset, NATS takes 75 % of the
// volume's free space at start, which shrinks as the streams fill it until the byte limits the
// streams reserve at creation and at every restore (TRACKING's 1 GiB) no longer fit, and the
// stream is lost at a restart. It must hold those reservations and 512 MiB more for the streams
// without a limit (EMAILS, EVENTS). With nats-server on the PATH, the config is also handed to
// `nats-server -t`.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import yaml from 'js-yaml'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const { STREAMS } = await import(resolve(root, 'libs/contracts/src/subjects.ts'))
const problems = []
const fail = (where, msg) => problems.push(`${where}: ${msg}`)

const MIB = 1024 ** 2
const UNITS = { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 }
for (const [i, s] of ['Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'].entries()) UNITS[s] = 1024 ** (i + 1)
/** Bytes of a Kubernetes quantity (2Gi, 1536Mi, 5G, 1.5Gi), or NaN. */
function quantity(q) {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/.exec(String(q))
  return m ? Math.floor(Number(m[1]) * UNITS[m[2] ?? '']) : Number.NaN
}

/** What the streams reserve from max_file_store: the byte limits they are created with. */
const reserved = Object.values(STREAMS).reduce((n, s) => n + (s.maxBytesAtCreation ?? 0), 0)
if (reserved < 1024 ** 3)
  fail('libs/contracts', `the streams reserve ${reserved} bytes: TRACKING's limit not read`)

const natsServer = spawnSync('sh', ['-c', 'command -v nats-server']).status === 0
const dir = mkdtempSync(join(tmpdir(), 'helm-check-nats-'))
process.once('exit', () => rmSync(dir, { recursive: true, force: true }))

let checked = 0
for (const path of process.argv.slice(2)) {
  const file = basename(path)
  const objs = yaml.loadAll(readFileSync(path, 'utf8')).filter((d) => d && typeof d === 'object')
  const sts = objs.find(
    (o) => o.kind === 'StatefulSet' && o.spec.template.metadata.labels?.['app.kubernetes.io/name'] === 'nats',
  )
  if (!sts) continue
  const where = `${file} StatefulSet/${sts.metadata.name}`
  const volume = sts.spec.template.spec.containers[0].volumeMounts.find((m) => m.mountPath === '/data')?.name
  const claim = (sts.spec.volumeClaimTemplates ?? []).find((t) => t.metadata.name === volume)
  const size = quantity(claim?.spec.resources.requests.storage)
  if (!size) fail(where, `no volume claim for /data with a size (${claim?.spec.resources.requests.storage})`)
  const cmName = sts.spec.template.spec.volumes.find((v) => v.configMap)?.configMap.name
  const conf =
    objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name === cmName)?.data?.['nats.conf'] ?? ''
  const jetstream = /jetstream\s*\{([^}]*)\}/.exec(conf)?.[1] ?? ''
  const value = /^\s*max_file_store\s*[:=]?\s*(\S+)\s*$/m.exec(jetstream)?.[1]
  if (value === undefined) {
    fail(where, 'max_file_store is not set: NATS would take 75 % of the free space at start')
    continue
  }
  if (!/^\d+$/.test(value)) fail(where, `max_file_store ${value} is not plain bytes`)
  const store = Number(value)
  const want = Math.floor((size * 3) / 4)
  if (store !== want) fail(where, `max_file_store ${store} is not 75 % of the ${size}-byte volume (${want})`)
  if (store < reserved + 512 * MIB)
    fail(
      where,
      `max_file_store ${store} does not hold the ${reserved} bytes the streams reserve and 512 MiB more`,
    )
  if (natsServer) {
    const confFile = join(dir, `${file}.conf`)
    writeFileSync(confFile, conf)
    const r = spawnSync('nats-server', ['-t', '-c', confFile], {
      env: { ...process.env, POD_NAME: 'nats-0' },
    })
    if (r.status !== 0)
      fail(where, `nats-server -t refuses the config: ${String(r.stderr || r.stdout).trim()}`)
  }
  checked++
  console.log(`  ${file}: max_file_store ${store} (75 % of ${size}); the streams reserve ${reserved}`)
}

if (problems.length) {
  console.error(`${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}`)
  process.exit(1)
}
if (checked === 0) {
  console.error('no render with the bundled NATS')
  process.exit(1)
}
console.log(
  `  the bundled NATS's file store holds the streams' reservations${natsServer ? '; nats-server -t accepts its config' : ' (no nats-server here to test the config)'}`,
)
