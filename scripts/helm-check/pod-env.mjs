// What a pod of a rendered chart would start with, checked against the services themselves.
// Run with tsx (it imports each service's zod env schema from services/<name>/src/env.ts):
//   tsx pod-env.mjs rendered.yaml...
// For every Deployment, the migration Job and the test Pod: the environment Kubernetes would
// give the container (the image's ENV, envFrom, env in order with $(VAR) expansion, Secret and
// ConfigMap keys resolved from the same render, or a valid stand-in for a Secret the user
// manages) must pass the service's env schema, as `loadEnvOrExit` does at start (a failure
// there is a crash loop with exit 78); a key a render's own Secret does not have is a pod stuck
// in CreateContainerConfigError; a CA file DATABASE_URL names, and the NATS_TLS_* files, must be
// mounted (the test pod's nats CLI flags too, naming the services' files); the ports, probes and
// grace period must match what the service then serves, and its drain (SHUTDOWN_TIMEOUT_SECONDS)
// outlast the longest wait its settings give the work it finishes on SIGTERM.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import yaml from 'js-yaml'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const problems = []
const fail = (where, msg) => problems.push(`${where}: ${msg}`)

/** ENV of the Dockerfile's runtime stage: what a container has before the pod adds its own. */
function imageEnv() {
  const text = readFileSync(resolve(root, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ')
  const stage = text.slice(text.lastIndexOf('\nFROM '))
  const env = {}
  for (const line of stage.split('\n').filter((l) => l.startsWith('ENV '))) {
    for (const m of line.slice(4).matchAll(/(\w+)=(\S+)/g)) env[m[1]] = m[2]
  }
  return env
}

/** Paths the ops server answers (libs/observability/src/ops-server.ts), read from its source. */
const OPS_PATHS = new Set(
  [
    ...readFileSync(resolve(root, 'libs/observability/src/ops-server.ts'), 'utf8').matchAll(
      /path === '(\/[a-z]+)'/g,
    ),
  ].map((m) => m[1]),
)

/**
 * Stand-ins for secrets kept in a Secret the user creates (values-production.yaml): valid values
 * of the form docs/operations.md asks for, so only the chart's own settings are judged.
 */
const USER_SECRET = {
  DATABASE_URL: 'postgresql://mailer:pw@db.internal:5432/mailer?sslmode=require',
  NATS_URL: 'nats://mailer:pw@nats.nats.svc:4222',
  ADMIN_API_KEY: 'a'.repeat(64),
  TRACKING_SECRET: 'b'.repeat(64),
  SMTP_URL: 'smtps://user:pw@smtp.relay.example:465',
}

const schemas = new Map()
/** The service's `loadEnv` and the variables its schema reads (the exported zod object's keys). */
async function serviceEnv(name) {
  if (!schemas.has(name)) {
    const mod = await import(resolve(root, `services/${name}/src/env.ts`))
    const schema = Object.values(mod).find((v) => v && typeof v === 'object' && v.shape)
    schemas.set(name, { loadEnv: mod.loadEnv, reads: new Set(Object.keys(schema?.shape ?? {})) })
  }
  return schemas.get(name)
}

/** Kubernetes' $(VAR) expansion: defined names are replaced, $$ escapes, others stay as written. */
const expand = (value, env) =>
  value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, name) =>
    m === '$$' ? '$' : name in env ? env[name] : m,
  )

/** The container's environment, or null when Kubernetes could not start it. */
function containerEnv(c, objs, where) {
  const find = (kind, name) => objs.find((o) => o.kind === kind && o.metadata.name === name)
  const secretValue = (ref, varName) => {
    const s = find('Secret', ref.name)
    if (!s) {
      if (!(varName in USER_SECRET)) fail(where, `env ${varName}: no stand-in for your Secret ${ref.name}`)
      return USER_SECRET[varName] ?? ''
    }
    if (s.stringData && ref.key in s.stringData) return String(s.stringData[ref.key])
    if (s.data && ref.key in s.data) return Buffer.from(s.data[ref.key], 'base64').toString('utf8')
    if (!ref.optional) fail(where, `env ${varName}: Secret ${ref.name} has no key ${ref.key}`)
    return undefined
  }
  const env = { ...imageEnv() }
  for (const f of c.envFrom ?? []) {
    if (f.configMapRef) Object.assign(env, find('ConfigMap', f.configMapRef.name)?.data ?? {})
    if (f.secretRef) {
      const s = find('Secret', f.secretRef.name)
      for (const [k, v] of Object.entries(s?.data ?? {})) env[k] = Buffer.from(v, 'base64').toString('utf8')
    }
  }
  for (const e of c.env ?? []) {
    let v
    if (e.value !== undefined) v = expand(String(e.value), env)
    else if (e.valueFrom?.secretKeyRef) v = secretValue(e.valueFrom.secretKeyRef, e.name)
    else if (e.valueFrom?.configMapKeyRef) {
      const ref = e.valueFrom.configMapKeyRef
      v = find('ConfigMap', ref.name)?.data?.[ref.key]
      if (v === undefined && !ref.optional)
        fail(where, `env ${e.name}: ConfigMap ${ref.name} has no key ${ref.key}`)
    } else v = 'from-the-downward-api'
    if (v !== undefined) env[e.name] = v
  }
  return env
}

/**
 * Whether `path` lies in a Secret or ConfigMap volume the container mounts that holds it: a file a
 * setting names that the pod does not have fails every connection (ENOENT).
 */
function mounted(spec, c, path) {
  return (c.volumeMounts ?? []).some((m) => {
    const dir = m.mountPath.replace(/\/$/, '')
    if (!path.startsWith(`${dir}/`)) return false
    const v = (spec.volumes ?? []).find((v) => v.name === m.name)
    const source = v?.secret ?? v?.configMap
    // With items only the listed paths exist; without, every key of a Secret the user made may.
    return !!source && (!source.items || source.items.some((i) => i.path === path.slice(dir.length + 1)))
  })
}

/**
 * Files DATABASE_URL names (sslrootcert, sslcert, sslkey): node-postgres reads them at every new
 * connection, so each must be mounted (externalDatabase.tlsCA).
 */
function checkDatabaseFiles(spec, c, url, where) {
  let params
  try {
    params = new URL(url).searchParams
  } catch {
    return
  }
  for (const name of ['sslrootcert', 'sslcert', 'sslkey']) {
    const path = params.get(name)
    if (path && !mounted(spec, c, path))
      fail(
        where,
        `DATABASE_URL's ${name}=${path} is in no mounted Secret or ConfigMap: every connection would fail`,
      )
  }
}

/** The NATS_TLS_* settings naming files (externalNats.tls), and the nats CLI flags for the same. */
const NATS_FILES = {
  NATS_TLS_CA_FILE: '--tlsca',
  NATS_TLS_CERT_FILE: '--tlscert',
  NATS_TLS_KEY_FILE: '--tlskey',
}
let natsStandIns
/**
 * Real files for the NATS_TLS_* settings, which the env schema reads at start (a CA, and a client
 * certificate with its key), standing in for the mounted ones once checkNatsFiles found them mounted.
 */
async function natsStandIn(name) {
  if (!natsStandIns) {
    const { createTestCa, issueCert } = await import(resolve(root, 'tests/support/tls-certs.ts'))
    const dir = mkdtempSync(join(tmpdir(), 'helm-check-nats-'))
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
    const ca = createTestCa(dir)
    const client = issueCert(ca, dir, 'client', { client: true })
    natsStandIns = {
      NATS_TLS_CA_FILE: ca.caFile,
      NATS_TLS_CERT_FILE: client.certFile,
      NATS_TLS_KEY_FILE: client.keyFile,
    }
  }
  return natsStandIns[name]
}

/** Each NATS_TLS_* file in `env` must be mounted; the schema then reads a stand-in in its place. */
async function checkNatsFiles(spec, c, env, where) {
  for (const name of Object.keys(NATS_FILES)) {
    if (!env[name]) continue
    if (!mounted(spec, c, env[name]))
      fail(where, `${name}=${env[name]} is in no mounted Secret or ConfigMap: the service would exit 78`)
    env[name] = await natsStandIn(name)
  }
}

const portNamed = (c, name) => (c.ports ?? []).find((p) => p.name === name)?.containerPort

/**
 * The longest the work a service finishes on SIGTERM may wait, in seconds, from its parsed env (what
 * its shutdown code waits for: helm/mailer/templates/_helpers.tpl, mailer.drainSeconds, says where).
 * A request a database that does not answer holds: DATABASE_QUERY_TIMEOUT_MS and the second the
 * client adds (libs/db clientQueryTimeout), none without a limit. Undefined: the shared drain.
 */
function drainWait(service, env) {
  const dbHold = env.DATABASE_QUERY_TIMEOUT_MS > 0 ? env.DATABASE_QUERY_TIMEOUT_MS / 1000 + 1 : 0
  switch (service) {
    case 'dispatcher':
      return Math.max(env.SMTP_TIMEOUT_SECONDS, env.SMTP_DATA_TIMEOUT_SECONDS)
    case 'gateway':
      return (env.AUTH_TIMEOUT_MS + env.UPSTREAM_TIMEOUT_MS) / 1000
    case 'broadcast':
      return dbHold + env.BROADCAST_SEND_TIMEOUT_MS / 1000
    case 'webhook':
      return dbHold + env.WEBHOOK_TIMEOUT_MS / 1000
  }
  return undefined
}
let drainMargin

async function checkService(o, objs, file) {
  const spec = o.spec.template.spec
  for (const c of spec.containers) {
    const where = `${file} ${o.kind}/${o.metadata.name}`
    const service = /^\/app\/services\/([a-z-]+)$/.exec(c.workingDir ?? '')?.[1]
    if (!service) {
      fail(where, `workingDir ${c.workingDir} is not /app/services/<service>`)
      continue
    }
    let loadEnv
    let reads
    try {
      ;({ loadEnv, reads } = await serviceEnv(service))
    } catch (err) {
      fail(where, `no service "${service}" (services/${service}/src/env.ts: ${err.message})`)
      continue
    }
    // A secret goes only to the services that read it (or to a $(VAR) another value is built
    // from): the admin key in a webhook pod, which calls customers' URLs, is one leak away.
    const built = (c.env ?? []).map((e) => e.value ?? '').join(' ')
    for (const e of c.env ?? []) {
      if (e.valueFrom?.secretKeyRef && !reads.has(e.name) && !built.includes(`$(${e.name})`))
        fail(
          where,
          `Secret ${e.valueFrom.secretKeyRef.name} gives ${e.name} to ${service}, which does not read it`,
        )
    }
    const raw = containerEnv(c, objs, where)
    // The logger's `version` (libs/observability): the release a log line came from in a rollout.
    // The image's tag, unless the values set it: `config` (the ConfigMap, which the chart's own
    // entry must not override) or the service's `env` (an entry other than the tag).
    const tag = c.image.slice(c.image.lastIndexOf(':') + 1)
    const fromConfig = c.envFrom
      ?.map((f) => objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name === f.configMapRef?.name))
      .find((cm) => cm?.data && 'MAILER_VERSION' in cm.data)?.data.MAILER_VERSION
    const own = (c.env ?? []).findLast((e) => e.name === 'MAILER_VERSION' && e.value !== tag)?.value
    const version = own ?? fromConfig ?? tag
    if (raw.MAILER_VERSION !== version)
      fail(
        where,
        `MAILER_VERSION is ${raw.MAILER_VERSION ?? '(unset)'}, not ${own !== undefined ? "the service's env's" : fromConfig !== undefined ? "config's" : "the image's tag"} ${version}`,
      )
    checkDatabaseFiles(spec, c, raw.DATABASE_URL ?? '', where)
    await checkNatsFiles(spec, c, raw, where)
    let env
    try {
      env = loadEnv(raw)
    } catch (err) {
      fail(where, `${service} would exit at start: ${err.message.replace(/\n\s*/g, ' ')}`)
      continue
    }
    if (portNamed(c, 'metrics') !== env.METRICS_PORT)
      fail(
        where,
        `container port "metrics" ${portNamed(c, 'metrics')} but METRICS_PORT is ${env.METRICS_PORT}`,
      )
    if (service === 'gateway' && portNamed(c, 'http') !== env.PORT)
      fail(where, `container port "http" ${portNamed(c, 'http')} but PORT is ${env.PORT}`)
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
      const get = c[probe]?.httpGet
      if (!get) fail(where, `${probe}: none`)
      else if (get.port !== 'metrics' && get.port !== env.METRICS_PORT)
        fail(where, `${probe}: port ${get.port} is not the ops server's (METRICS_PORT ${env.METRICS_PORT})`)
      else if (!OPS_PATHS.has(get.path)) fail(where, `${probe}: the ops server does not serve ${get.path}`)
    }
    // The drain outlasts what the work in hand may wait (a chunk's answer, an endpoint's, an
    // upstream's), as the dispatcher's outlasts a relay's: SHUTDOWN_TIMEOUT_SECONDS, as the service
    // reads it, at least that wait plus the dispatcher's DRAIN_MARGIN_SECONDS (at most the setting's
    // bound of 600, which only the dispatcher raises itself past).
    drainMargin ??= (await import(resolve(root, 'services/dispatcher/src/env.ts'))).DRAIN_MARGIN_SECONDS
    const wait = drainWait(service, env)
    if (wait !== undefined) {
      const want = Math.ceil(wait) + drainMargin
      if (env.SHUTDOWN_TIMEOUT_SECONDS < (service === 'dispatcher' ? want : Math.min(600, want)))
        fail(
          where,
          `SHUTDOWN_TIMEOUT_SECONDS ${env.SHUTDOWN_TIMEOUT_SECONDS} is under the ${want} s its work in hand may take (a wait of ${wait} s + ${drainMargin}): a drain would cut it off`,
        )
    }
    // SIGTERM comes after the preStop hook; the grace period counts both.
    const preStop = Number(c.lifecycle?.preStop?.exec?.command?.at(-1) ?? 0)
    const grace = spec.terminationGracePeriodSeconds ?? 30
    if (grace <= preStop + env.SHUTDOWN_TIMEOUT_SECONDS)
      fail(
        where,
        `terminationGracePeriodSeconds ${grace} does not cover preStop ${preStop} s + SHUTDOWN_TIMEOUT_SECONDS ${env.SHUTDOWN_TIMEOUT_SECONDS}`,
      )
  }
}

/** A variable a container of a Job or Pod reads must be set, and usable as `re` says. */
function checkNeeds(o, objs, file, name, re, reads = () => true) {
  const where = `${file} ${o.kind}/${o.metadata.name}`
  const spec = o.kind === 'Pod' ? o.spec : o.spec.template.spec
  for (const c of spec.containers.filter(reads)) {
    const value = containerEnv(c, objs, where)[name]
    if (!re.test(value ?? '')) fail(where, `container ${c.name}: ${name} "${value ?? ''}" is not usable`)
    if (name === 'DATABASE_URL') checkDatabaseFiles(spec, c, value ?? '', where)
    // The nats CLI's TLS flags must name mounted files, and the same ones the services get.
    if (name === 'NATS_URL') {
      const args = (c.args ?? []).join(' ')
      const services = objs.filter((d) => d.kind === 'Deployment')
      for (const [setting, flag] of Object.entries(NATS_FILES)) {
        const path = new RegExp(`${flag} (\\S+)`).exec(args)?.[1]
        if (path && !mounted(spec, c, path))
          fail(where, `container ${c.name}: ${flag} ${path} is not mounted`)
        for (const d of services) {
          const e = (d.spec.template.spec.containers[0].env ?? []).find((e) => e.name === setting)
          if (e?.value !== path)
            fail(
              where,
              `${flag} ${path ?? '(none)'}, but ${d.metadata.name} has ${setting}=${e?.value ?? '(none)'}`,
            )
        }
      }
    }
  }
}

/**
 * The migration's waits (libs/db/migrate/run.mjs, MIGRATE_WAIT_SECONDS: migrations.waitSeconds): a
 * number of seconds it takes, shorter than the Job's activeDeadlineSeconds, which would kill it
 * while it still waits.
 */
function checkMigrateWait(o, objs, file) {
  const where = `${file} ${o.kind}/${o.metadata.name}`
  for (const c of o.spec.template.spec.containers) {
    const raw = containerEnv(c, objs, where).MIGRATE_WAIT_SECONDS
    const wait = Number(raw)
    if (raw === undefined || raw === '' || !Number.isFinite(wait) || wait < 0)
      fail(
        where,
        `container ${c.name}: MIGRATE_WAIT_SECONDS "${raw ?? ''}" is not a number of seconds run.mjs takes`,
      )
    else if (!(wait < (o.spec.activeDeadlineSeconds ?? Number.POSITIVE_INFINITY)))
      fail(
        where,
        `MIGRATE_WAIT_SECONDS ${wait} is not under activeDeadlineSeconds ${o.spec.activeDeadlineSeconds}`,
      )
  }
}

for (const path of process.argv.slice(2)) {
  const file = basename(path)
  const objs = yaml.loadAll(readFileSync(path, 'utf8')).filter((d) => d && typeof d === 'object')
  for (const o of objs) {
    // The chart's own Deployments (the bundled NATS and PostgreSQL are StatefulSets).
    if (o.kind === 'Deployment') await checkService(o, objs, file)
    // The migration reads DATABASE_URL (libs/db/prisma.config.ts); the test pod's nats CLI NATS_URL.
    if (o.kind === 'Job') {
      checkNeeds(o, objs, file, 'DATABASE_URL', /^postgres(ql)?:\/\/[^$]+$/)
      checkMigrateWait(o, objs, file)
    }
    if (o.kind === 'Pod')
      checkNeeds(o, objs, file, 'NATS_URL', /^(nats|tls):\/\/[^$]+$/, (c) =>
        (c.args ?? []).join(' ').includes('$NATS_URL'),
      )
  }
  console.log(`  ${file}: pod environments checked`)
}

if (problems.length) {
  console.error(`${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}`)
  process.exit(1)
}
console.log('  every service would start with its rendered environment; ports, probes and grace agree')
