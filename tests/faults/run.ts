// `make test-faults`: steady live sends while each part of the platform fails in turn; then checks
// that nothing accepted was lost. See tests/faults/README.md. Exits 1 when a check fails.
import { setTimeout as sleep } from 'node:timers/promises'
import { type FaultRow, settle, tally } from './check.js'
import { CLIENT_TIMEOUT_MS, OUTCOMES, SteadyLoad } from './load.js'
import { Platform } from './platform.js'

const DOWN_MS = 4_000
/** How long the load keeps going after a part is back, still counted under its fault. */
const AFTER_MS = 4_000
const SETTLE_TIMEOUT_MS = 180_000
const started = Date.now()
const log = (m: string) =>
  console.error(`[faults ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${m}`)

log('starting private PostgreSQL, NATS, SMTP relay, webhook receiver and the services')
const p = await Platform.start()
/** The run's verdicts: each a check that passed (`ok`) or the problem it found. */
const checks: Array<{ ok: boolean; what: string }> = []
try {
  await p.admin('POST', '/v1/admin/projects', { slug: 'faults', name: 'Fault run', dailyLimit: 0 })
  const key = (await p.admin('POST', '/v1/admin/projects/faults/api-keys', { name: 'load', mode: 'live' }))
    .key as string
  await p.admin('POST', '/v1/admin/projects/faults/domains/faults.test/setup')
  await p.admin('POST', '/v1/webhooks', { url: p.receiver.url, events: ['*'] }, key)
  const projectId = (await p.sql<{ id: string }>(`SELECT id FROM projects WHERE slug = 'faults'`))[0]!.id

  const faults: Array<{ name: string; inject: () => Promise<void> }> = [
    ...(['gateway', 'auth', 'email', 'dispatcher', 'webhook'] as const).map((s) => ({
      name: `kill -9 ${s}`,
      inject: () => p.crashService(s, DOWN_MS),
    })),
    {
      name: 'restart NATS (kill -9)',
      inject: async () => {
        await p.nats.kill()
        await sleep(DOWN_MS)
        await p.nats.up()
      },
    },
    {
      name: 'restart PostgreSQL (immediate)',
      inject: async () => {
        await p.pg.crash()
        await sleep(DOWN_MS)
        await p.pg.up()
      },
    },
    {
      name: 'SMTP relay down',
      inject: async () => {
        p.relay.setMode('drop')
        await sleep(2 * DOWN_MS)
        p.relay.setMode('up')
      },
    },
    {
      name: 'webhook receiver down',
      inject: async () => {
        await p.receiver.down()
        await sleep(2 * DOWN_MS)
        await p.receiver.up()
      },
    },
  ]

  const load = new SteadyLoad(p.gatewayUrl, key, 'Faults <load@faults.test>', { clients: 4, pauseMs: 20 })
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
  const rows = tally(p, accepted, phases, load.counts)
  console.log(renderTable(rows))

  const total = (o: string) => rows.reduce((n, r) => n + (r.outcomes[o] ?? 0), 0)
  const lost = rows.reduce((n, r) => n + r.lost, 0)
  const refusedElsewhere = rows.filter((r) => r.fault !== 'kill -9 gateway' && (r.outcomes.refused ?? 0) > 0)
  checks.push(
    { ok: lost === 0, what: `${lost} accepted emails never reached the SMTP relay` },
    {
      ok: state.unsettled.size === 0,
      what: `${state.unsettled.size} accepted emails not in a final status: ${[...state.unsettled].slice(0, 5).join(', ')}`,
    },
    {
      ok: state.missingEvents.length === 0,
      what: `${state.missingEvents.length} events never reached the webhook`,
    },
    {
      ok: total('hang') === 0,
      what: `${total('hang')} requests got no answer within ${CLIENT_TIMEOUT_MS} ms`,
    },
    { ok: total('other') === 0, what: `${total('other')} requests got an answer other than 202, 503 or 429` },
    {
      ok: refusedElsewhere.length === 0,
      what: `connections refused while the gateway was up: ${refusedElsewhere.map((r) => r.fault).join(', ')}`,
    },
  )
  const crashed = [...p.procs.values()].filter((s) => s.diedOnItsOwn)
  checks.push({
    ok: crashed.length === 0,
    what: `services died on their own (not killed by the run): ${crashed.map((s) => s.name).join(', ')}`,
  })
  const dups = rows.reduce((n, r) => n + r.duplicates, 0)
  console.log(
    `\n${accepted.length} emails accepted, ${dups} relayed twice, ${p.receiver.received.size} events at the webhook ` +
      `(${p.receiver.duplicates} repeats); run took ${((Date.now() - started) / 1000).toFixed(0)} s`,
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
// The plain closing line CI reads: one per check above.
console.log(`faults: ${checks.length - failedChecks} passed, ${failedChecks} failed`)
process.exit(failedChecks > 0 || checks.length === 0 ? 1 : 0)

/** The event timeline of (at most 5) emails the relay got twice: why it happened. */
async function timelines(p: Platform, accepted: Array<{ id: string; to: string }>): Promise<string> {
  const counts = p.relay.deliveryCounts()
  const ids = accepted.filter((a) => (counts.get(`${a.id} ${a.to}`) ?? 0) > 1).map((a) => a.id)
  const out: string[] = []
  for (const id of ids.slice(0, 5)) {
    const ev = await p.sql<{ type: string; at: Date; data: unknown }>(
      `SELECT type, created_at AS at, payload->'data' AS data FROM email_events WHERE email_id = $1 ORDER BY created_at`,
      [id],
    )
    out.push(`  ${id}: ${ev.map((e) => `${e.at.toISOString().slice(11, 23)} ${e.type}`).join(', ')}`)
  }
  return out.join('\n')
}

function renderTable(rows: FaultRow[]): string {
  const head = ['fault', 's', 'accepted', 'delivered', 'duplicates', 'lost', ...OUTCOMES.map(label)]
  const line = (c: Array<string | number>) => `| ${c.join(' | ')} |`
  return [
    line(head),
    line(head.map(() => '---')),
    ...rows.map((r) =>
      line([
        r.fault,
        r.seconds.toFixed(0),
        r.accepted,
        r.delivered,
        r.duplicates,
        r.lost,
        ...OUTCOMES.map((o) => r.outcomes[o] ?? 0),
      ]),
    ),
  ].join('\n')
}

function label(o: string): string {
  return (
    { ok: '2xx', unavailable: '503', limited: '429', refused: 'refused', hang: 'hang', other: 'other' }[o] ??
    o
  )
}
