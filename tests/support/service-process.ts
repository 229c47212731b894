import { type ChildProcess, spawn } from 'node:child_process'
import { appendFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { freePort, onExit, until } from './infra.js'
import { SERVICE_NODE_FLAGS } from './node-flags.js'

const ROOT = join(import.meta.dirname, '..', '..')

export type ServiceName = 'gateway' | 'auth' | 'email' | 'dispatcher' | 'webhook'

/**
 * A service as its own OS process (`node --import tsx services/<name>/src/main.ts`), as `make dev`
 * runs it, for the bench and the fault tests. Error lines are kept in memory; `logFile` gets every
 * line (appended, so a restarted service continues it); ECHO_SERVICE=<name> prints one service's
 * lines to stderr, for debugging.
 */
export class ServiceProcess {
  metricsPort = 0
  private exited: Promise<void>
  readonly errors: string[] = []
  /** Set by kill/stop: an exit after it was asked for. */
  private stopping = false
  /** The process exited without kill/stop asking it to (a crash: a finding of its own). */
  diedOnItsOwn = false

  private constructor(
    readonly name: ServiceName,
    readonly proc: ChildProcess,
  ) {
    this.exited = new Promise((r) => proc.once('exit', () => r()))
  }

  static async start(
    name: ServiceName,
    env: Record<string, string>,
    nodeFlags: string[] = [],
    logFile?: string,
  ): Promise<ServiceProcess> {
    // A fixed ops port: at LOG_LEVEL=warn the start-up line that would name a random one is not logged.
    const metricsPort = await freePort()
    const proc = spawn(
      process.execPath,
      [...SERVICE_NODE_FLAGS, ...nodeFlags, '--import', 'tsx', join('services', name, 'src', 'main.ts')],
      {
        cwd: ROOT,
        env: { ...process.env, ...env, METRICS_PORT: String(metricsPort) },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    const s = new ServiceProcess(name, proc)
    s.metricsPort = metricsPort
    // Never outlive the harness (see onExit).
    onExit(() => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
    })
    // Only errors are kept (for the report's notes).
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      if (logFile) appendFileSync(logFile, `${line}\n`)
      try {
        const o = JSON.parse(line) as { level?: string }
        if (o.level === 'error' || o.level === 'fatal') s.errors.push(line.slice(0, 500))
        if (process.env.ECHO_SERVICE === name) console.error(`${name}| ${line.slice(0, 300)}`)
      } catch {
        s.errors.push(line.slice(0, 500))
      }
    })
    createInterface({ input: proc.stderr! }).on('line', (line) => {
      if (logFile) appendFileSync(logFile, `${line}\n`)
      s.errors.push(line.slice(0, 500))
    })
    // A service that dies on its own (not through kill/stop) is a finding of its own.
    proc.once('exit', (code, signal) => {
      if (s.stopping) return
      s.diedOnItsOwn = true
      s.errors.push(`${name} exited on its own (code ${code}, signal ${signal})`)
    })
    await until(`${name} ready`, async () => {
      if (proc.exitCode !== null) throw new Error(`${name} exited: ${s.errors.slice(-5).join('\n')}`)
      return (await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).ok
    })
    return s
  }

  get pid(): number {
    return this.proc.pid!
  }

  /** Peak resident set size so far, from /proc/<pid>/status (VmHWM), in MiB. */
  peakRssMiB(): number | null {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.pid}/status`, 'utf8'))
      return m ? Math.round(Number(m[1]) / 1024) : null
    } catch {
      return null
    }
  }

  async kill(): Promise<void> {
    this.stopping = true
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGKILL')
    await this.exited
  }

  /** SIGTERM: drains, and writes its CPU profile when started with --cpu-prof. */
  async stop(): Promise<void> {
    this.stopping = true
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGTERM')
    await this.exited
  }
}
