#!/usr/bin/env node
// `make dev`: find or start PostgreSQL and NATS, apply migrations, run every service as its own
// process with prefixed, readable logs, print the base URL and admin key. Ctrl-C stops it all.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { connect as tcpConnect } from 'node:net'
import { join } from 'node:path'

const root = new URL('..', import.meta.url).pathname
const require = createRequire(join(root, 'libs/db/package.json'))
const pg = require('pg')

// Start order: back-end services first, the gateway last. Metrics ports follow METRICS_ORDER.
const SERVICES = ['auth', 'email', 'dispatcher', 'webhook', 'broadcast', 'analytics', 'gateway']
const METRICS_ORDER = ['gateway', 'auth', 'email', 'dispatcher', 'webhook', 'broadcast', 'analytics']
const COLORS = [36, 33, 35, 32, 34, 91, 96]
const children = []
const cleanups = []

const log = (msg) => console.log(`\x1b[1m[dev]\x1b[0m ${msg}`)
const reachable = (host, port) =>
  new Promise((resolve) => {
    const s = tcpConnect({ host, port, timeout: 800 }, () => {
      s.destroy()
      resolve(true)
    })
    s.on('error', () => resolve(false))
    s.on('timeout', () => {
      s.destroy()
      resolve(false)
    })
  })
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0
const asRoot = (args) => (process.getuid?.() === 0 ? args : ['sudo', ...args])

// DEV_DATA_DIR, DEV_PG_PORT and DEV_OWN_PG_PORT move what a test must not share with the
// machine's make dev (docs/development.md); nobody else needs them.
const data = process.env.DEV_DATA_DIR || join(root, '.data')
mkdirSync(data, { recursive: true })
/** A path as the user reads it: relative to the checkout when inside it. */
const shown = (p) => (p.startsWith(root) ? p.slice(root.length) : p)

/** Says what went wrong in one line and stops what it started: no stack trace for a setup problem. */
function fatal(msg) {
  log(msg)
  for (const f of cleanups.reverse()) f()
  process.exit(1)
}

function aptInstall(pkg) {
  log(`installing ${pkg} from the OS packages`)
  const [cmd, ...rest] = asRoot(['apt-get', 'install', '-y', '-qq', pkg])
  spawnSync(asRoot(['apt-get', 'update', '-qq'])[0], asRoot(['apt-get', 'update', '-qq']).slice(1), {
    stdio: 'inherit',
  })
  const r = spawnSync(cmd, rest, {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  })
  if (r.status !== 0) fatal(`could not install ${pkg} (see above)`)
}

/** Why the server refused the password-less login, in words (pg's own are about SASL internals). */
function refusal(e) {
  const msg = String(e?.message ?? e)
  if (e?.code === '28P01' || /password/i.test(msg)) return 'wants a password for user postgres'
  return `cannot be used as user postgres without a password (${msg})`
}

const pgBins = () =>
  existsSync('/usr/lib/postgresql')
    ? readdirSync('/usr/lib/postgresql')
        .sort((a, b) => Number(b) - Number(a))
        .map((v) => `/usr/lib/postgresql/${v}/bin`)
        .filter((b) => existsSync(`${b}/initdb`))
    : []

async function postgres() {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL
  const pgPort = Number(process.env.DEV_PG_PORT || 5432)
  const dir = join(data, 'pg')
  if (await reachable('127.0.0.1', pgPort)) {
    // A stock Debian/Ubuntu server asks for a password over TCP (pg_hba scram-sha-256).
    try {
      return await ensureDb(`postgres://postgres@127.0.0.1:${pgPort}/postgres`, 'mailer')
    } catch (e) {
      const why = `PostgreSQL on 127.0.0.1:${pgPort} ${refusal(e)}: set DATABASE_URL=postgres://USER:PASSWORD@127.0.0.1:${pgPort}/postgres to use it`
      // Installing a second server beside the user's would change their machine behind their back.
      if (pgBins().length === 0) fatal(`${why} (no PostgreSQL server binaries to start one of its own)`)
      log(`${why}; starting one of its own under ${shown(dir)} instead`)
    }
  }
  return ownPostgres(dir)
}

/** Its own cluster under .data/pg on port 5433, trusting local logins; installs PostgreSQL if need be. */
async function ownPostgres(dir) {
  const port = Number(process.env.DEV_OWN_PG_PORT || 5433)
  if (pgBins().length === 0) aptInstall('postgresql')
  const bin = pgBins()[0]
  if (!bin) fatal('no PostgreSQL server binaries under /usr/lib/postgresql after installing postgresql')
  if (await reachable('127.0.0.1', port))
    fatal(
      `cannot start its own PostgreSQL: port ${port} is in use (one an earlier make dev left running in ${shown(dir)}?)`,
    )
  const asPg = (args) => (process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', ...args] : args)
  const pgTool = (args, what) => {
    const [c, ...a] = asPg(args)
    const r = spawnSync(c, a, { encoding: 'utf8' })
    if (r.status !== 0) {
      const last = `${r.stderr ?? ''}${r.stdout ?? ''}`.trim().split('\n').pop() || String(r.error ?? '')
      fatal(`could not ${what}: ${last}`)
    }
  }
  if (!existsSync(join(dir, 'PG_VERSION'))) {
    mkdirSync(dir, { recursive: true })
    if (process.getuid?.() === 0) execFileSync('chown', ['-R', 'postgres', dir])
    pgTool(
      [`${bin}/initdb`, '-D', dir, '-U', 'postgres', '--auth=trust'],
      `create a PostgreSQL cluster in ${shown(dir)}`,
    )
  }
  const logFile = join(dir, 'log')
  pgTool(
    [
      `${bin}/pg_ctl`,
      '-D',
      dir,
      '-o',
      `-p ${port} -k /tmp -c listen_addresses=127.0.0.1`,
      '-l',
      logFile,
      '-w',
      'start',
    ],
    `start its own PostgreSQL (see ${shown(logFile)})`,
  )
  cleanups.push(() => {
    const [c2, ...a2] = asPg([`${bin}/pg_ctl`, '-D', dir, '-m', 'fast', '-w', 'stop'])
    spawnSync(c2, a2, { stdio: 'ignore' })
  })
  log(`started PostgreSQL on 127.0.0.1:${port} (data in ${shown(dir)})`)
  try {
    return await ensureDb(`postgres://postgres@127.0.0.1:${port}/postgres`, 'mailer')
  } catch (e) {
    fatal(`its own PostgreSQL on 127.0.0.1:${port} refused it: ${e?.message ?? e} (see ${shown(logFile)})`)
  }
}

async function ensureDb(adminUrl, name) {
  // A bounded wait: something other than PostgreSQL on the port may never answer.
  const c = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 10_000 })
  c.on('error', () => {}) // a late connection error after end(): the query's rejection says it
  try {
    await c.connect()
    const { rowCount } = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
    if (!rowCount) await c.query(`CREATE DATABASE "${name}"`)
  } finally {
    await c.end().catch(() => {})
  }
  const u = new URL(adminUrl)
  u.pathname = `/${name}`
  return u.toString()
}

async function nats() {
  if (process.env.NATS_URL) return process.env.NATS_URL
  if (await reachable('127.0.0.1', 4222)) return 'nats://127.0.0.1:4222'
  if (!has('nats-server') && !existsSync('/usr/sbin/nats-server')) aptInstall('nats-server')
  const bin = has('nats-server') ? 'nats-server' : '/usr/sbin/nats-server'
  const dir = join(data, 'nats')
  mkdirSync(dir, { recursive: true })
  // Whole emails cross the bus (up to MAX_BODY_BYTES): NATS's 1 MB default is too small.
  const conf = join(data, 'nats.conf')
  writeFileSync(conf, 'max_payload: 24MB\n')
  const p = spawn(bin, ['-c', conf, '-a', '127.0.0.1', '-p', '4222', '-js', '-sd', dir], { stdio: 'ignore' })
  cleanups.push(() => p.kill('SIGTERM'))
  for (let i = 0; i < 50 && !(await reachable('127.0.0.1', 4222)); i++) await sleep(100)
  log(`started nats-server with JetStream on 127.0.0.1:4222 (data in ${shown(dir)})`)
  return 'nats://127.0.0.1:4222'
}

/**
 * URLs (a comma-separated list, as NATS_URL may be) for the screen: a password stays off it and
 * out of pasted logs, and so does the user part when it may be a token (NATS `nats://token@h`).
 */
function forScreen(value, keepUser = true) {
  return String(value)
    .split(',')
    .map((v) => {
      try {
        const u = new URL(v.trim())
        if (u.password) u.password = '***'
        if (!keepUser && u.username) u.username = '***'
        return u.toString()
      } catch {
        return '(not a URL)'
      }
    })
    .join(',')
}

function secret(file, make) {
  const path = join(data, file)
  if (!existsSync(path)) writeFileSync(path, make(), { mode: 0o600 })
  return readFileSync(path, 'utf8').trim()
}

// Pretty-prints pino JSON lines: "12:00:01 INFO  message key=value".
function pretty(line) {
  try {
    const o = JSON.parse(line)
    const { time, level, msg, service: _s, version: _v, pid: _p, hostname: _h, ...rest } = o
    const t = typeof time === 'string' ? time.slice(11, 19) : ''
    const lvl = String(level).toUpperCase().padEnd(5)
    const extra = Object.entries(rest)
      .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`)
      .join(' ')
    return `${t} ${lvl} ${msg ?? ''} ${extra}`.trimEnd()
  } catch {
    return line
  }
}

function run(name, i, env) {
  const color = COLORS[i % COLORS.length]
  const tag = `\x1b[${color}m${name.padEnd(10)}\x1b[0m|`
  // The services' Node flags, as in the image (Dockerfile NODE_OPTIONS; tests/support/node-flags.ts).
  const p = spawn(
    process.execPath,
    ['--max-semi-space-size=32', '--import', 'tsx', `services/${name}/src/main.ts`],
    {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  for (const stream of [p.stdout, p.stderr]) {
    let buf = ''
    stream.on('data', (d) => {
      buf += d
      const lines = buf.split('\n')
      buf = lines.pop()
      for (const l of lines) if (l) console.log(`${tag} ${pretty(l)}`)
    })
  }
  // A service that dies leaves the rest half-working (a gateway whose port was taken answers
  // nothing, an auth that crashed answers every request 503): stop them all and say so.
  p.on('exit', (code, sig) => {
    if (stopping) return
    log(`${name} exited (${sig ?? code}); stopping the others`)
    stop(1)
  })
  children.push(p)
}

let stopping = false
async function stop(code = 0) {
  if (stopping) return
  stopping = true
  log('stopping services (drain)…')
  for (const c of children) c.kill('SIGTERM')
  const running = (c) => c.exitCode === null && c.signalCode === null
  await Promise.all(children.map((c) => (running(c) ? new Promise((r) => c.on('exit', r)) : null)))
  for (const f of cleanups.reverse()) f()
  log('stopped')
  process.exit(code)
}
process.on('SIGINT', () => stop())
process.on('SIGTERM', () => stop())

// The ports first: on a port another process holds (another `make dev`), the gateway died at
// once while /health answered from the other one, so this printed "Mailer is running" with an
// admin key that server refuses; a taken metrics port crashed its service with a stack trace.
const port = Number(process.env.PORT ?? 3000)
const metricsBase = Number(process.env.METRICS_PORT ?? 9464)
const metricsPort = (name) => metricsBase + METRICS_ORDER.indexOf(name)
const ports = [
  { port, what: 'PORT, the API' },
  ...METRICS_ORDER.map((name) => ({ port: metricsPort(name), what: `metrics of ${name}` })),
]
const taken = []
for (const p of ports) if (await reachable('127.0.0.1', p.port)) taken.push(p)
if (taken.length > 0) {
  for (const p of taken) log(`port ${p.port} (${p.what}) is in use: another make dev?`)
  log(
    `stop what listens there, or choose other ports: PORT (${port}) for the API, METRICS_PORT (${metricsBase}) for the gateway's metrics, the other services taking the next six`,
  )
  process.exit(1)
}

const databaseUrl = await postgres()
const natsUrl = await nats()
// On a shared PostgreSQL or NATS, what this instance uses there (NATS_PREFIX keeps two apart).
log(`PostgreSQL ${forScreen(databaseUrl)}`)
log(
  `NATS ${forScreen(natsUrl, false)}, ${process.env.NATS_PREFIX ? `prefix ${process.env.NATS_PREFIX}` : 'no prefix'}`,
)
log('applying migrations')
// Prisma says what is wrong (a refused login, a server it cannot reach) on stderr; the rest of
// execFileSync's error is a stack trace about this script.
const migrated = spawnSync('pnpm', ['--filter', '@mailer/db', 'migrate'], {
  cwd: root,
  stdio: ['ignore', 'ignore', 'inherit'],
  env: { ...process.env, DATABASE_URL: databaseUrl },
})
if (migrated.status !== 0)
  fatal(`could not apply the migrations to ${forScreen(databaseUrl)} (see above): is DATABASE_URL right?`)

const adminKey =
  process.env.ADMIN_API_KEY ?? secret('admin-key', () => `admin_${randomBytes(18).toString('base64url')}`)
const base = {
  ...process.env,
  NODE_ENV: 'development',
  DATABASE_URL: databaseUrl,
  NATS_URL: natsUrl,
  ADMIN_API_KEY: adminKey,
  PUBLIC_URL: process.env.PUBLIC_URL ?? `http://localhost:${port}`,
  TRACKING_SECRET:
    process.env.TRACKING_SECRET ?? secret('tracking-secret', () => randomBytes(32).toString('hex')),
  MAIL_TRANSPORT: process.env.MAIL_TRANSPORT ?? (process.env.SMTP_URL ? 'smtp' : 'file'),
  MAIL_OUTBOX_DIR: process.env.MAIL_OUTBOX_DIR ?? join(data, 'outbox'),
  DOMAIN_VERIFICATION: process.env.DOMAIN_VERIFICATION ?? 'skip',
  WEBHOOK_ALLOW_PRIVATE: process.env.WEBHOOK_ALLOW_PRIVATE ?? 'true',
  DEV_ROUTES: process.env.DEV_ROUTES ?? 'true',
}
const present = SERVICES.filter((s) => existsSync(join(root, 'services', s, 'src', 'main.ts')))
for (const [i, name] of present.entries()) {
  run(name, i, { ...base, PORT: String(port), METRICS_PORT: String(metricsPort(name)) })
}

const url = `http://localhost:${port}`
// Running means every service is ready (its /readyz), not the gateway alone: a service that
// refuses its settings at start (exit 78) could take longer to load than the gateway to answer,
// and the banner then said Mailer was running just before everything stopped.
const answers = async (u) => {
  try {
    return (await fetch(u)).ok
  } catch {
    return false
  }
}
const checks = [
  { what: `the gateway at ${url}/health`, url: `${url}/health` },
  ...present.map((name) => ({
    what: `${name} at its /readyz`,
    url: `http://localhost:${metricsPort(name)}/readyz`,
  })),
]
let waiting = checks
for (let i = 0; i < 300 && waiting.length > 0 && !stopping; i++) {
  const ok = await Promise.all(waiting.map((c) => answers(c.url)))
  waiting = waiting.filter((_, j) => !ok[j])
  if (waiting.length > 0) await sleep(200)
}
// A service that died has already started stop(), which ends the process.
if (!stopping && waiting.length > 0) {
  log(`not ready within 60 s: ${waiting.map((c) => c.what).join(', ')}; stopping`)
  await stop(1)
}
if (!stopping)
  console.log(`
\x1b[1mMailer is running\x1b[0m
  base URL:   ${url}
  admin key:  ${adminKey}
  ${base.MAIL_TRANSPORT === 'file' ? `outbox:     ${base.MAIL_OUTBOX_DIR}` : `relay:      ${forScreen(base.SMTP_URL)}`}
  metrics:    http://localhost:${metricsBase}/metrics (gateway; other services on ${metricsBase + 1}-${metricsBase + 6})
Press Ctrl-C to stop.
`)
