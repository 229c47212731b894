import { type ChildProcess, fork } from 'node:child_process'
import { join } from 'node:path'
import type { Receipt } from './receiver.js'
import { SINK_HOST } from './sink-address.js'
import { until } from './stack.js'

/** What the flow phases read: SMTP arrivals per email id, webhook arrivals per (path, event id). */
export interface SmtpView {
  received: Map<string, number>
  duplicates: number
}
export interface HookView {
  receipts: Map<string, Receipt>
  duplicates: number
}

/** Parent side of sinks-process.ts: the SMTP sink and the webhook receiver, in their own process. */
export class Sinks {
  readonly smtp: SmtpView = { received: new Map(), duplicates: 0 }
  readonly hooks: HookView = { receipts: new Map(), duplicates: 0 }
  private ports = { smtpPort: 0, webhookPort: 0 }

  private constructor(private readonly proc: ChildProcess) {}

  static async start(): Promise<Sinks> {
    const proc = fork(join(import.meta.dirname, 'sinks-process.ts'), [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    const s = new Sinks(proc)
    proc.on('message', (m: any) => {
      if (m.ready) s.ports = m.ready
      for (const [id, at] of m.smtp ?? []) s.smtp.received.set(id, at)
      for (const [k, createdAt, at] of m.hooks ?? []) s.hooks.receipts.set(k, { createdAt, at })
      if (typeof m.smtpDuplicates === 'number') s.smtp.duplicates = m.smtpDuplicates
      if (typeof m.hookDuplicates === 'number') s.hooks.duplicates = m.hookDuplicates
    })
    await until('the sinks to listen', () => s.ports.smtpPort)
    return s
  }

  get pid(): number {
    return this.proc.pid!
  }

  get smtpUrl(): string {
    return `smtp://${SINK_HOST}:${this.ports.smtpPort}`
  }

  webhookUrl(path: string): string {
    return `http://${SINK_HOST}:${this.ports.webhookPort}${path}`
  }

  async stop(): Promise<void> {
    const exited = new Promise((r) => this.proc.once('exit', r))
    this.proc.send({ stop: true })
    await exited
  }
}
