import { setTimeout as sleep } from 'node:timers/promises'
import { load, percentile } from './load.js'
import { type BenchProject, sendInput } from './setup.js'
import type { HookView, SmtpView } from './sinks.js'

/** How long the bench waits for the last emails or webhook deliveries once the load stopped. */
const DRAIN_TIMEOUT_MS = 120_000

export interface FlowRow {
  /** What was offered: closed loop at `connections`, or `rate` requests per second. */
  connections: number
  rate: number | null
  accepted: number
  delivered: number
  duplicates: number
  /** Delivered per second, from the first request to the last arrival. */
  perSecond: number
  latencyMs: { p50: number; p99: number; max: number }
  drainedInMs: number
  /** CPU seconds per process group from the first request to the end of the drain. */
  cpu?: Map<string, number>
}

interface Meter {
  start(): void
  stop(): Map<string, number>
}

/** Waits until `count()` reaches `want` or stops moving for 30 s; returns when it stopped. */
async function drain(count: () => number, want: number): Promise<number> {
  const start = Date.now()
  let last = -1
  let still = Date.now()
  while (count() < want && Date.now() - start < DRAIN_TIMEOUT_MS) {
    const n = count()
    if (n !== last) {
      last = n
      still = Date.now()
    } else if (Date.now() - still > 30_000) break
    await sleep(100)
  }
  return Date.now() - start
}

/**
 * Accept → SMTP sink. Sends single emails for `seconds` (closed loop at `connections`, or at a
 * fixed `rate`), notes when each 202 came back, then waits for the sink to have every one.
 */
export async function endToEndPhase(
  gatewayUrl: string,
  p: BenchProject,
  sink: SmtpView,
  opts: { seconds: number; connections: number; rate?: number; meter?: Meter },
): Promise<FlowRow> {
  const acceptedAt = new Map<string, number>()
  opts.meter?.start()
  const started = Date.now()
  await load({
    url: `${gatewayUrl}/v1/emails`,
    key: p.key,
    connections: opts.connections,
    seconds: opts.seconds,
    body: sendInput(p),
    ...(opts.rate ? { rate: opts.rate } : {}),
    onResponse: (status, text) => {
      if (status === 202) acceptedAt.set((JSON.parse(text) as { id: string }).id, Date.now())
    },
  })
  const ids = [...acceptedAt.keys()]
  const got = () => ids.reduce((n, id) => n + (sink.received.has(id) ? 1 : 0), 0)
  const drainedInMs = await drain(got, ids.length)
  const cpu = opts.meter?.stop()
  const lags: number[] = []
  let last = started
  for (const id of ids) {
    const at = sink.received.get(id)
    if (at === undefined) continue
    lags.push(at - acceptedAt.get(id)!)
    if (at > last) last = at
  }
  return {
    connections: opts.connections,
    rate: opts.rate ?? null,
    accepted: ids.length,
    delivered: lags.length,
    duplicates: sink.duplicates,
    perSecond: lags.length / ((last - started) / 1000),
    latencyMs: { p50: percentile(lags, 50), p99: percentile(lags, 99), max: percentile(lags, 100) },
    drainedInMs,
    ...(cpu ? { cpu } : {}),
  }
}

/**
 * Webhook fan-out: emails of a project with `receiverPaths.length` webhooks (all events) are sent
 * at `rate` per second; every event of each (queued, sent, delivered) goes to every webhook.
 * Reports deliveries per second at the receiver and the lag from the event's `createdAt`.
 */
export async function webhookPhase(
  gatewayUrl: string,
  p: BenchProject,
  receiver: HookView,
  opts: { seconds: number; rate: number; webhooks: number; eventsPerEmail: number; meter?: Meter },
): Promise<FlowRow> {
  const before = receiver.receipts.size
  opts.meter?.start()
  const started = Date.now()
  let accepted = 0
  await load({
    url: `${gatewayUrl}/v1/emails`,
    key: p.key,
    connections: 32,
    seconds: opts.seconds,
    body: sendInput(p),
    rate: opts.rate,
    onResponse: (status) => {
      if (status === 202) accepted++
    },
  })
  const want = before + accepted * opts.eventsPerEmail * opts.webhooks
  const drainedInMs = await drain(() => receiver.receipts.size, want)
  const cpu = opts.meter?.stop()
  const lags: number[] = []
  let last = started
  for (const r of receiver.receipts.values()) {
    if (r.at < started) continue
    lags.push(r.at - r.createdAt)
    if (r.at > last) last = r.at
  }
  return {
    connections: 32,
    rate: opts.rate,
    accepted,
    delivered: lags.length,
    duplicates: receiver.duplicates,
    perSecond: lags.length / ((last - started) / 1000),
    latencyMs: { p50: percentile(lags, 50), p99: percentile(lags, 99), max: percentile(lags, 100) },
    drainedInMs,
    ...(cpu ? { cpu } : {}),
  }
}
