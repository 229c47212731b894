import { type ChildProcess, spawn } from 'node:child_process'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { waitFor } from '@mailer/testing'
import { SERVICE_NODE_FLAGS } from './node-flags.js'
import type { ServiceName } from './stack.js'

const ROOT = join(import.meta.dirname, '..', '..')

/** A service running as its own OS process, started exactly as in production (`main.ts`). */
export interface SpawnedService {
  name: ServiceName
  proc: ChildProcess
  /** Its ops server (`/metrics`, `/readyz`), found in its start-up log line. */
  metricsPort: number
  /** Parsed JSON log lines, oldest first. */
  logs: Array<Record<string, unknown>>
  /** SIGKILL: no drain, no shutdown hooks, connections cut by the kernel. */
  kill(): Promise<void>
  /** SIGTERM: the graceful drain. */
  stop(): Promise<void>
}

/**
 * Spawns `node --import tsx services/<name>/src/main.ts` with the test env (its own metrics port,
 * info-level JSON logs captured rather than printed) and waits until its ops server reports
 * ready (`/readyz`: NATS and PostgreSQL reachable).
 */
export async function spawnService(name: ServiceName, env: Record<string, string>): Promise<SpawnedService> {
  const proc = spawn(
    process.execPath,
    [...SERVICE_NODE_FLAGS, '--import', 'tsx', join('services', name, 'src', 'main.ts')],
    {
      cwd: ROOT,
      env: { ...process.env, ...env, METRICS_PORT: '0', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  const logs: Array<Record<string, unknown>> = []
  const stderr: string[] = []
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    try {
      logs.push(JSON.parse(line) as Record<string, unknown>)
    } catch {
      stderr.push(line)
    }
  })
  createInterface({ input: proc.stderr! }).on('line', (line) => stderr.push(line))
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)))
  let gone = false
  void exited.then(() => {
    gone = true
  })

  const metricsPort = await waitFor(
    () => {
      if (gone) throw new Error(`${name} exited during start-up:\n${stderr.join('\n')}`)
      const line = logs.find((l) => typeof l.metricsPort === 'number')
      return line ? (line.metricsPort as number) : null
    },
    { timeoutMs: 30_000, what: `${name} to start` },
  )
  await waitFor(async () => (await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).ok, {
    timeoutMs: 30_000,
    what: `${name} ready`,
  })

  const end = async (signal: NodeJS.Signals) => {
    if (!gone) proc.kill(signal)
    await exited
  }
  return { name, proc, metricsPort, logs, kill: () => end('SIGKILL'), stop: () => end('SIGTERM') }
}
