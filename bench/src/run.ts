// `make bench`: starts a private PostgreSQL and NATS, the Mailer services as child processes, an
// SMTP sink and a webhook receiver; measures accept, batch, end to end and webhook fan-out, and the
// baseline program; prints the report and writes bench/results/<date>.md. Settings (env):
//   BENCH_SECONDS   length of each measured phase (default 10)
//   BENCH_PHASES    comma list of baseline,accept,batch,e2e,webhooks (default all)
//   BENCH_PROFILE=1 run the services with --cpu-prof (profiles and their flame graphs under
//                   .data/bench-profiles/<stamp>)
//   BENCH_WEBHOOK_RATE emails/s in the webhook phase (default 200)
//   BENCH_DATABASE_URL  use this PostgreSQL (a fresh schema in it) instead of a private one;
//                   BENCH_KEEP_SCHEMA=1 leaves that schema there afterwards, to look at its tables
//   BENCH_PG_STATS=1 per-statement PostgreSQL times of each phase (.data/bench-pgstats/<stamp>-<phase>.txt)
//   BASE_URL        measure a Mailer that is already running (`make dev`, an ingress) instead of
//                   starting one; needs its ADMIN_API_KEY. Its dispatcher must relay to the bench's
//                   SMTP sink (BENCH_SMTP_PORT, BENCH_SINK_HOST) for the end-to-end phase, and its
//                   webhook service must reach BENCH_SINK_HOST:BENCH_WEBHOOK_PORT.
import { randomBytes } from 'node:crypto'
import { readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import { createMigratedSchema, dropSchema } from '@mailer/db/testing'
import { connect } from 'nats'
import { CpuMeter } from './cpu.js'
import { readProfile } from './cpu-profile.js'
import { callTree, flameSvg } from './flame-graph.js'
import { PG_STATS_SETTINGS, PgStats } from './pg-stats.js'
import { acceptPhase, baselinePhase, batchPhase } from './phases-accept.js'
import { endToEndPhase, webhookPhase } from './phases-flow.js'
import { type BenchReport, renderReport } from './report.js'
import { writeResults } from './results.js'
import { addWebhook, createProject } from './setup.js'
import { Sinks } from './sinks.js'
import {
  ensureDir,
  freePort,
  PrivateNats,
  PrivatePostgres,
  ROOT,
  type ServiceName,
  ServiceProcess,
} from './stack.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const PHASES = new Set((process.env.BENCH_PHASES ?? 'baseline,accept,batch,e2e,webhooks').split(','))
const WEBHOOKS = 4
/** Events each email produces once delivered: email.queued, email.sent, email.delivered. */
const EVENTS_PER_EMAIL = 3
const stamp = new Date().toISOString().replace(/[:.]/g, '-')
/** A running Mailer to measure (BASE_URL), or null: start one here. */
const TARGET = process.env.BASE_URL?.replace(/\/+$/, '') || null
if (TARGET && !process.env.ADMIN_API_KEY) throw new Error("BASE_URL needs the target's ADMIN_API_KEY")
/** Project slugs of this run: a target's database keeps those of earlier runs. */
const runId = randomBytes(3).toString('hex')
const profileDir =
  process.env.BENCH_PROFILE === '1' ? ensureDir(join(ROOT, '.data', 'bench-profiles', stamp)) : null
const log = (m: string) => console.error(`[bench] ${m}`)
const load1 = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ')

const report: BenchReport = {
  startedAt: new Date(),
  conditions: [],
  accept: [],
  baseline: [],
  batch: null,
  e2e: null,
  e2eLatency: null,
  webhooks: null,
  webhookCount: WEBHOOKS,
  rss: [],
  notes: [],
}

const withPgStats = process.env.BENCH_PG_STATS === '1' && !process.env.BENCH_DATABASE_URL
const pg = process.env.BENCH_DATABASE_URL
  ? null
  : await PrivatePostgres.start(withPgStats ? PG_STATS_SETTINGS : [])
const baseUrl = process.env.BENCH_DATABASE_URL ?? pg!.url
const schema = `bench_${randomBytes(4).toString('hex')}`
const nats = await PrivateNats.start()
const sinks = await Sinks.start()
const services = new Map<ServiceName, ServiceProcess>()
const adminKey = TARGET ? process.env.ADMIN_API_KEY! : `bench-admin-${randomBytes(8).toString('hex')}`

try {
  const databaseUrl = await createMigratedSchema(baseUrl, schema)
  const stats = withPgStats ? await PgStats.open(baseUrl, stamp) : null
  /** Runs a phase, with PostgreSQL's per-statement times when BENCH_PG_STATS=1. */
  const phase = <T>(name: string, work: () => Promise<T>): Promise<T> =>
    stats ? stats.around(name, work) : work()
  const port = await freePort()
  const env: Record<string, string> = {
    NODE_ENV: 'production',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    DATABASE_URL: databaseUrl,
    NATS_URL: nats.url,
    ADMIN_API_KEY: adminKey,
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    TRACKING_SECRET: randomBytes(24).toString('hex'),
    RATE_LIMIT: '1000000000',
    // The accept phases' emails stay queued once their messages are purged (below); the email
    // service would dispatch them again after this long, into the flow phases' figures.
    DISPATCH_RECOVERY_SECONDS: String(30 * 86_400),
    DOMAIN_VERIFICATION: 'skip',
    MAIL_TRANSPORT: 'smtp',
    SMTP_URL: sinks.smtpUrl,
    WEBHOOK_ALLOW_PRIVATE: 'true',
  }
  const start = async (name: ServiceName) => {
    if (TARGET) return
    const flags = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []
    services.set(name, await ServiceProcess.start(name, env, flags))
  }
  const gatewayUrl = TARGET ?? `http://127.0.0.1:${port}`
  if (TARGET)
    report.conditions.push(
      `target: the running Mailer at ${TARGET} (BASE_URL); the private PostgreSQL and NATS below serve the baseline only, and the CPU table covers this machine's bench processes, not the target's services`,
    )
  report.conditions.push(
    `${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}; load average (1/5/15 min) at start: ${load1()}`,
    `PostgreSQL: ${pg ? `private cluster (${baseUrl}), default settings (fsync and synchronous_commit on)` : 'BENCH_DATABASE_URL'}; NATS: private nats-server with JetStream file storage`,
    `services as child processes (node --import tsx), NODE_ENV=production, LOG_LEVEL=warn${profileDir ? ', with --cpu-prof' : ''}; one replica each; load generator (autocannon) in the bench process, SMTP sink (smtp-server) and webhook receiver in a child process of their own`,
    `each phase ${SECONDS} s after a 2 s warm-up; HTTP/1.1 keep-alive`,
  )

  if (PHASES.has('baseline')) {
    log('baseline')
    const b = await baselinePhase({ DATABASE_URL: databaseUrl, NATS_URL: nats.url }, SECONDS, (pid) =>
      meterFor(new Map([['baseline', [pid]]])),
    )
    report.baseline = b.rows
    report.rss.push({ name: 'baseline', peakMiB: b.peakRssMiB })
  }

  for (const s of ['auth', 'email', 'gateway'] as const) await start(s)
  const acceptP = await createProject(gatewayUrl, adminKey, `bench-accept-${runId}`)
  if (PHASES.has('accept')) {
    log(`accept (load ${load1()})`)
    report.accept = await phase('accept', () => acceptPhase(gatewayUrl, acceptP, SECONDS, meterFor()))
  }
  if (PHASES.has('batch')) {
    log(`batch (load ${load1()})`)
    report.batch = await phase('batch', () =>
      batchPhase(gatewayUrl, acceptP, SECONDS, meterFor(), Number(process.env.BENCH_BATCH_CONNECTIONS ?? 8)),
    )
  }

  // The accept phases left a backlog no dispatcher was reading: drop it so the flow phases
  // measure their own emails only (those emails stay `queued` in this throw-away schema).
  if (!TARGET) await purgeStreams(nats.url)
  else if (PHASES.has('accept') || PHASES.has('batch'))
    report.notes.push(
      "the accept phases' emails were still queued in the target when the flow phases began (its streams are not purged): run `BENCH_PHASES=e2e,webhooks` separately for clean flow figures",
    )
  if (PHASES.has('e2e') || PHASES.has('webhooks')) await start('dispatcher')
  if (PHASES.has('e2e')) {
    const p = await createProject(gatewayUrl, adminKey, `bench-e2e-${runId}`)
    log(`end to end, closed loop (load ${load1()})`)
    report.e2e = await phase('e2e', () =>
      endToEndPhase(gatewayUrl, p, sinks.smtp, {
        seconds: SECONDS,
        connections: 32,
        meter: meterFor(),
      }),
    )
    // Latency is only meaningful below capacity: offer 80 % of what was just sustained.
    const sustained = Number.isFinite(report.e2e.perSecond) ? report.e2e.perSecond : 0
    const rate = Math.max(50, Math.round(Math.min(sustained, 1_000) * 0.8))
    log(`end to end at ${rate}/s (load ${load1()})`)
    report.e2eLatency = await endToEndPhase(gatewayUrl, p, sinks.smtp, {
      seconds: SECONDS,
      connections: 32,
      rate,
    })
  }
  if (PHASES.has('webhooks')) {
    if (!TARGET) await purgeStreams(nats.url, ['EVENTS'])
    await start('webhook')
    const p = await createProject(gatewayUrl, adminKey, `bench-webhooks-${runId}`)
    for (let i = 0; i < WEBHOOKS; i++) await addWebhook(gatewayUrl, p, sinks.webhookUrl(`/wh/${i}`))
    // 200 emails/s × 3 events × 4 webhooks = 2,400 deliveries/s offered (BENCH_WEBHOOK_RATE: a
    // lower rate shows the cost per delivery below saturation).
    const rate = Number(process.env.BENCH_WEBHOOK_RATE ?? 200)
    log(`webhook fan-out at ${rate} emails/s (load ${load1()})`)
    report.webhooks = await phase('webhooks', () =>
      webhookPhase(gatewayUrl, p, sinks.hooks, {
        seconds: SECONDS,
        rate,
        webhooks: WEBHOOKS,
        eventsPerEmail: EVENTS_PER_EMAIL,
        meter: meterFor(),
      }),
    )
  }

  for (const [name, s] of services) report.rss.push({ name, peakMiB: s.peakRssMiB() })
  // Each service's own view of where the time went (handled/request histograms), for the README.
  const dump: string[] = []
  for (const [name, s] of services) {
    const text = await (await fetch(`http://127.0.0.1:${s.metricsPort}/metrics`)).text()
    dump.push(
      ...text
        .split('\n')
        .filter((l) => /_(sum|count)[{ ]/.test(l))
        .map((l) => `${name} ${l}`),
    )
  }
  writeFileSync(join(ensureDir(join(ROOT, '.data', 'bench-metrics')), `${stamp}.txt`), `${dump.join('\n')}\n`)
  report.conditions.push(`load average at the end: ${load1()}`)
  if (stats) {
    await stats.close()
    report.notes.push(`PostgreSQL per-statement times: .data/bench-pgstats/${stamp}-<phase>.txt`)
  }
  for (const [name, s] of services)
    if (s.errors.length) report.notes.push(`${name} logged ${s.errors.length} errors, e.g. ${s.errors[0]}`)
  if (profileDir)
    report.notes.push(
      `CPU profiles: ${profileDir} (<service>.cpuprofile, and <service>.svg: its flame graph; summarise with \`node --import tsx bench/src/profile-top.ts <file>\`)`,
    )
} finally {
  // SIGTERM so the services drain (and write their CPU profiles), gateway first.
  for (const name of ['gateway', 'auth', 'email', 'dispatcher', 'webhook'] as const)
    await services.get(name)?.stop()
  if (profileDir) nameProfiles(profileDir, services)
  await sinks.stop()
  await nats.stop()
  if (pg) await pg.stop()
  else if (process.env.BENCH_KEEP_SCHEMA === '1') console.log(`[bench] schema ${schema} kept`)
  else await dropSchema(baseUrl, schema).catch(() => undefined)
}

const text = renderReport(report)
console.log(text)
log(`written to ${writeResults(text, report.startedAt, PHASES.size === 5 && SECONDS === 10)}`)

/**
 * V8 names profiles CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile; thread 0 is the main one
 * (the others are tsx's module loader). Keeps the main threads' as <service>.cpuprofile, each with
 * its flame graph as <service>.svg.
 */
function nameProfiles(dir: string, procs: Map<ServiceName, ServiceProcess>): void {
  for (const f of readdirSync(dir)) {
    const m = /^CPU\.\d+\.\d+\.(\d+)\.(\d+)\.\d+\.cpuprofile$/.exec(f)
    if (!m) continue
    const owner = [...procs].find(([, s]) => s.pid === Number(m[1]))
    if (!owner || m[2] !== '0') {
      rmSync(join(dir, f))
      continue
    }
    const file = join(dir, `${owner[0]}.cpuprofile`)
    renameSync(join(dir, f), file)
    writeFileSync(
      join(dir, `${owner[0]}.svg`),
      flameSvg(callTree(readProfile(file)), `${owner[0]} (${stamp})`),
    )
  }
}

/** CPU of every service, PostgreSQL, nats-server and the bench process itself (load generator, sink, receiver). */
function meterFor(extra = new Map<string, number[]>()): CpuMeter {
  return new CpuMeter(() => {
    const groups = new Map<string, number[]>(extra)
    for (const [name, s] of services) groups.set(name, [s.pid])
    groups.set('postgres', CpuMeter.postgresPids(pg?.pid ?? null))
    if (nats.pid) groups.set('nats', [nats.pid])
    groups.set('bench', [process.pid])
    groups.set('sinks', [sinks.pid])
    return groups
  })
}

async function purgeStreams(url: string, names = ['EMAILS', 'EVENTS']): Promise<void> {
  const nc = await connect({ servers: url })
  try {
    const jsm = await nc.jetstreamManager()
    for (const n of names) await jsm.streams.purge(n).catch(() => undefined)
  } finally {
    await nc.close()
  }
}
