// `make test-faults`: steady live sends while each part of the platform fails in turn; then checks
// that nothing accepted was lost. See tests/faults/README.md. Exits 1 when a check fails.
// FAULTS=<words>,… runs only the faults whose names contain one of them (while developing).
import { setTimeout as sleep } from 'node:timers/promises'
import { settle, tally } from './check.js'
import { CLIENT_TIMEOUT_MS, SteadyLoad } from './load.js'
import { Platform } from './platform.js'
import { renderEmails, renderRequests, timelines } from './report.js'
import { verifyViaApi } from './verify.js'

/** The services the issue has killed, in its order. */
const KILLED = ['gateway', 'auth', 'email', 'dispatcher', 'webhook'] as const
const DOWN_MS = 4_000
/** How long the load keeps going after a part is back, still counted under its fault. */
const AFTER_MS = 4_000
const SETTLE_TIMEOUT_MS = 180_000
const started = Date.now()
const log = (m: string) =>
  console.error(`[faults ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${m}`)

/**
 * A fault: `inject` breaks a part and brings it back; `felt` (asked after the run) answers why the
 * fault did not visibly happen, or null when it did, so a harness that no longer breaks anything
 * cannot pass for a platform that survives everything.
 */
interface Fault {
  name: string
  inject: () => Promise<void>
  felt: () => Promise<string | null>
}

log('starting private PostgreSQL, NATS, SMTP relay, webhook receivers and the services')
const p = await Platform.start()
/** The run's verdicts: each a check that passed (`ok`) or the problem it found. */
const checks: Array<{ ok: boolean; what: string }> = []
let faultCount = 0
try {
  await p.admin('POST', '/v1/admin/projects', { slug: 'faults', name: 'Fault run', dailyLimit: 0 })
  const key = (await p.admin('POST', '/v1/admin/projects/faults/api-keys', { name: 'load', mode: 'live' }))
    .key as string
  await p.admin('POST', '/v1/admin/projects/faults/domains/faults.test/setup')
  for (const r of p.receivers) await p.admin('POST', '/v1/webhooks', { url: r.url, events: r.events }, key)
  const projectId = (await p.sql<{ id: string }>(`SELECT id FROM projects WHERE slug = 'faults'`))[0]!.id
  const load = new SteadyLoad(p.gatewayUrl, key, 'Faults <load@faults.test>', { clients: 4, pauseMs: 20 })
  const unavailable = (fault: string) => load.counts.get(fault)?.unavailable ?? 0

  const all: Fault[] = [
    ...KILLED.map((s): Fault => {
      let signal: string | null = null
      return {
        name: `kill -9 ${s}`,
        inject: async () => {
          signal = await p.crashService(s, DOWN_MS)
        },
        felt: async () => (signal === 'SIGKILL' ? null : `${s} ended by ${signal}, not SIGKILL`),
      }
    }),
    {
      name: 'restart NATS (kill -9)',
      inject: async () => {
        await p.nats.kill()
        await sleep(DOWN_MS)
        await p.nats.up()
      },
      felt: async () => (unavailable('restart NATS (kill -9)') > 0 ? null : 'no request got 503'),
    },
    {
      name: 'restart PostgreSQL (immediate)',
      inject: async () => {
        await p.pg.crash()
        await sleep(DOWN_MS)
        await p.pg.up()
      },
      felt: async () => (unavailable('restart PostgreSQL (immediate)') > 0 ? null : 'no request got 503'),
    },
    (() => {
      let cut = 0
      return {
        name: 'SMTP relay down',
        inject: async () => {
          const before = p.relay.dropped
          p.relay.setMode('drop')
          await sleep(2 * DOWN_MS)
          p.relay.setMode('up')
          cut = p.relay.dropped - before
        },
        felt: async () => (cut > 0 ? null : 'the dispatcher never tried the relay while it was down'),
      }
    })(),
    {
      name: 'webhook receiver down',
      inject: async () => {
        const [b] = await p.sql<{ n: number }>(
          `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'`,
        )
        log(`(${b!.n} webhook deliveries pending as the receiver goes down)`)
        await p.receiver.down()
        await sleep(2 * DOWN_MS)
        await p.receiver.up()
      },
      // Attempts fail only when an endpoint does not answer: its webhook must show more deliveries
      // that needed another attempt than the one whose receiver stayed up (a backlog may be
      // attempted during the outage rather than what was created in it, so no time window).
      felt: async () => {
        const rows = await p.sql<{ url: string; n: number }>(
          `SELECT w.url, count(d.id)::int AS n FROM webhooks w
           LEFT JOIN webhook_deliveries d ON d.webhook_id = w.id AND d.attempt >= 2
           WHERE w.project_id = $1 GROUP BY w.url`,
          [projectId],
        )
        const retried = (url: string) => rows.find((r) => r.url === url)?.n ?? 0
        const [down, up] = [retried(p.receiver.url), retried(p.filtered.url)]
        return down > up ? null : `${down} of its deliveries needed a second attempt, ${up} of the other's`
      },
    },
  ]
  const only = process.env.FAULTS?.split(',').map((w) => w.trim().toLowerCase())
  const faults = only ? all.filter((f) => only.some((w) => f.name.toLowerCase().includes(w))) : all
  if (faults.length === 0) throw new Error(`FAULTS=${process.env.FAULTS} names no fault`)
  faultCount = faults.length

  load.start()
  await sleep(3_000)
  const phases: Array<{ name: string; seconds: number }> = [{ name: 'warm-up', seconds: 3 }]
  for (const f of faults) {
    const t0 = Date.now()
    load.phase = f.name
    log(f.name)
    await f.inject()
    await sleep(AFTER_MS)
    phases.push({ name: f.name, seconds: (Date.now() - t0) / 1000 })
  }
  load.phase = 'cool-down'
  await sleep(2_000)
  await load.stop()
  phases.push({ name: 'cool-down', seconds: 2 })

  const accepted = [...load.accepted.values()]
  log(`load stopped: ${accepted.length} emails accepted; waiting for every one to settle`)
  const state = await settle(p, accepted, projectId, SETTLE_TIMEOUT_MS)
  log('reading every accepted email through the API')
  const api = await verifyViaApi(p.gatewayUrl, key, accepted, p.receivers)
  const rows = tally(p, accepted, phases, load.counts)
  console.log(renderEmails(rows))
  console.log(`\nrequests (answered within ${CLIENT_TIMEOUT_MS / 1000} s, or hang):\n`)
  console.log(renderRequests(rows, load.slowestMs))

  const sum = (f: (r: (typeof rows)[number]) => number) => rows.reduce((n, r) => n + f(r), 0)
  const total = (o: string) => sum((r) => r.outcomes[o] ?? 0)
  const lost = sum((r) => r.lost)
  const refusedElsewhere = rows.filter((r) => r.fault !== 'kill -9 gateway' && (r.outcomes.refused ?? 0) > 0)
  const few = (xs: string[]) => xs.slice(0, 5).join('; ')
  const unfelt: string[] = []
  for (const f of faults) {
    const why = await f.felt()
    if (why) unfelt.push(`${f.name}: ${why}`)
  }
  const idle = rows.filter((r) => r.fault !== 'cool-down' && r.accepted === 0).map((r) => r.fault)
  checks.push(
    { ok: lost === 0, what: `${lost} accepted emails never reached the SMTP relay` },
    {
      ok: sum((r) => r.twiceAccepted) === 0,
      what: `${sum((r) => r.twiceAccepted)} emails relayed under another id than their Idempotency-Key's 202 named`,
    },
    {
      ok: state.unsettled.size === 0 && api.notFinal.length === 0,
      what: `accepted emails not in a final status: ${state.unsettled.size} in the database, ${api.notFinal.length} through the API: ${few(api.notFinal)}`,
    },
    {
      ok: api.missingTimeline.length === 0,
      what: `${api.missingTimeline.length} delivered emails lack queued/sent/delivered in their timeline: ${few(api.missingTimeline)}`,
    },
    {
      ok: state.missingEvents.length === 0 && api.missingAtWebhook.length === 0,
      what: `events a subscribed webhook never received: ${state.missingEvents.length} of the project's, ${api.missingAtWebhook.length} of accepted emails' timelines: ${few([...api.missingAtWebhook, ...state.missingEvents])}`,
    },
    {
      ok: api.wrongAtWebhook.length === 0,
      what: `${api.wrongAtWebhook.length} events reached a webhook wrong: ${few(api.wrongAtWebhook)}`,
    },
    {
      ok: total('hang') === 0,
      what: `${total('hang')} requests got no answer within ${CLIENT_TIMEOUT_MS} ms`,
    },
    {
      ok: total('other') === 0,
      what: `${total('other')} requests got an answer other than 202, or 503/429 with the contract's error`,
    },
    {
      ok: refusedElsewhere.length === 0,
      what: `connections refused while the gateway was up: ${refusedElsewhere.map((r) => r.fault).join(', ')}`,
    },
    { ok: unfelt.length === 0, what: `faults that did not happen: ${unfelt.join('; ')}` },
    { ok: idle.length === 0, what: `phases in which no email was accepted: ${idle.join(', ')}` },
  )
  const crashed = [...p.procs.values()].filter((s) => s.diedOnItsOwn)
  checks.push({
    ok: crashed.length === 0,
    what: `services died on their own (not killed by the run): ${crashed.map((s) => s.name).join(', ')}`,
  })
  const dups = sum((r) => r.duplicates)
  const hooksGot = p.receivers.map(
    (r) => `${r.received.size} (${r.duplicates} repeats) at ${r.events.join(',')}`,
  )
  console.log(
    `\n${accepted.length} emails accepted (API statuses: ${JSON.stringify(api.statuses)}), ${dups} relayed twice; ` +
      `events: ${hooksGot.join(', ')}; run took ${((Date.now() - started) / 1000).toFixed(0)} s`,
  )
  if (load.samples.length) console.log(`\nsample answers:\n  ${load.samples.join('\n  ')}`)
  if (dups > 0) console.log(`\nemails relayed twice, with their timelines:\n${await timelines(p, accepted)}`)
  for (const [name, proc] of p.procs)
    if (proc.errors.length)
      console.log(`\n${name} logged ${proc.errors.length} errors, first: ${proc.errors[0]}`)
  const problems = checks.filter((c) => !c.ok).map((c) => c.what)
  if (problems.length) console.log(`\nFAILED:\n  ${problems.join('\n  ')}\n(service logs: ${p.logDir})`)
  else console.log('\nPASSED: nothing accepted was lost, every request was answered in time')
} catch (err) {
  checks.push({ ok: false, what: `the run stopped: ${String(err)}` })
  console.error(err)
} finally {
  await p.stop().catch((e) => console.error('cleanup:', e))
}
const failedChecks = checks.filter((c) => !c.ok).length
// The plain closing line CI shows: checks (above), not faults, are counted.
console.log(
  `fault run: ${faultCount} faults, checks ${checks.length - failedChecks} passed, ${failedChecks} failed`,
)
process.exit(failedChecks > 0 || checks.length === 0 ? 1 : 0)
