import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { SERVICE_NODE_FLAGS } from '../../tests/support/node-flags.js'
import { type LoadResult, load } from './load.js'
import { type BenchProject, sendInput } from './setup.js'
import { ROOT, until } from './stack.js'

/** Concurrency levels of the accept and baseline phases; `BENCH_LEVELS=8` measures one alone. */
export const LEVELS: readonly number[] = process.env.BENCH_LEVELS
  ? process.env.BENCH_LEVELS.split(',').map(Number)
  : [8, 32, 128]
const WARMUP_SECONDS = 2

export interface AcceptRow extends LoadResult {
  target: 'mailer' | 'baseline'
  /** CPU seconds per process group during the level (see cpu.ts). */
  cpu?: Map<string, number>
}

/** Measures CPU around a step when given a meter. */
export interface Meter {
  start(): void
  stop(): Map<string, number>
}

/** Live single sends, `POST /v1/emails`, at each concurrency level (after a short warm-up). */
export async function acceptPhase(
  gatewayUrl: string,
  p: BenchProject,
  seconds: number,
  meter: Meter,
): Promise<AcceptRow[]> {
  const spec = { url: `${gatewayUrl}/v1/emails`, key: p.key, body: sendInput(p) }
  await load({ ...spec, connections: 8, seconds: WARMUP_SECONDS })
  const rows: AcceptRow[] = []
  for (const c of LEVELS) {
    meter.start()
    const r = await load({ ...spec, connections: c, seconds })
    rows.push({ target: 'mailer', ...r, cpu: meter.stop() })
  }
  return rows
}

/** The same load against bench/src/baseline.ts (one INSERT + one JetStream publish per POST). */
export async function baselinePhase(
  env: Record<string, string>,
  seconds: number,
  meter: (baselinePid: number) => Meter,
): Promise<{ rows: AcceptRow[]; peakRssMiB: number | null }> {
  // The same runtime flags as the services: the baseline is the same work without Mailer.
  const proc = spawn(
    process.execPath,
    [...SERVICE_NODE_FLAGS, '--import', 'tsx', join('bench', 'src', 'baseline.ts')],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  let port = 0
  createInterface({ input: proc.stdout! }).on('line', (l) => {
    try {
      port = (JSON.parse(l) as { listening: number }).listening
    } catch {
      /* not ours */
    }
  })
  try {
    await until('baseline to listen', () => port)
    const m = meter(proc.pid!)
    const spec = {
      url: `http://127.0.0.1:${port}/`,
      key: 'none',
      body: { to: 'reader@example.com', subject: 'x' },
    }
    await load({ ...spec, connections: 8, seconds: WARMUP_SECONDS })
    const rows: AcceptRow[] = []
    for (const c of LEVELS) {
      m.start()
      const r = await load({ ...spec, connections: c, seconds })
      rows.push({ target: 'baseline', ...r, cpu: m.stop() })
    }
    const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'))
    return { rows, peakRssMiB: hwm ? Math.round(Number(hwm[1]) / 1024) : null }
  } finally {
    const exited = new Promise((r) => proc.once('exit', r))
    proc.kill('SIGTERM')
    await exited
  }
}

export interface BatchRow {
  cpu?: Map<string, number>
  connections: number
  seconds: number
  requestsPerSecond: number
  emailsPerSecond: number
  itemErrors: number
  latencyMs: LoadResult['latencyMs']
  errors: number
}

/** `POST /v1/emails/batch` of 100 emails; counts the items that got an id. */
export async function batchPhase(
  gatewayUrl: string,
  p: BenchProject,
  seconds: number,
  meter: Meter,
  connections = 8,
): Promise<BatchRow> {
  const body = Array.from({ length: 100 }, (_, i) => sendInput(p, `reader${i}@example.com`))
  let accepted = 0
  let itemErrors = 0
  meter.start()
  const r = await load({
    url: `${gatewayUrl}/v1/emails/batch`,
    key: p.key,
    connections,
    seconds,
    body,
    onResponse: (status, text) => {
      if (status !== 200) return
      const ids = text.match(/"id":"email_/g)?.length ?? 0
      accepted += ids
      itemErrors += 100 - ids
    },
  })
  const cpu = meter.stop()
  return {
    cpu,
    connections,
    seconds,
    requestsPerSecond: r.okPerSecond,
    emailsPerSecond: accepted / seconds,
    itemErrors,
    latencyMs: r.latencyMs,
    errors: r.errors,
  }
}
