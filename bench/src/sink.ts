import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import { listenAddress } from './sink-address.js'

/**
 * The SMTP relay the dispatcher delivers to during the bench: a real `smtp-server` that accepts
 * everything and keeps, per email (from its Message-ID `<emailId@domain>`), when it arrived.
 * Only the headers are scanned; bodies are discarded as they stream in.
 */
export class SmtpSink {
  /** emailId → receipt time (ms since epoch) of its first arrival. */
  readonly received = new Map<string, number>()
  duplicates = 0
  private server!: SMTPServer
  port = 0

  static async start(): Promise<SmtpSink> {
    const sink = new SmtpSink()
    sink.server = new SMTPServer({
      disabledCommands: ['STARTTLS', 'AUTH'],
      authOptional: true,
      logger: false,
      maxClients: 1_000,
      onData: (stream, _session, cb) => {
        let head = ''
        let done = false
        stream.on('data', (c: Buffer) => {
          if (done) return
          head += c.toString('latin1')
          if (head.includes('\r\n\r\n') || head.length > 64 * 1024) done = true
        })
        stream.on('end', () => {
          const id = /^message-id:\s*<(email_[0-9A-Z]{26})@/im.exec(head)?.[1]
          if (id) {
            if (sink.received.has(id)) sink.duplicates++
            else sink.received.set(id, Date.now())
          }
          cb(null)
        })
      },
    })
    // A client's reset arrives as an 'error' event; unhandled, it would end the sink mid-run.
    sink.server.on('error', () => undefined)
    const { port, host } = listenAddress('BENCH_SMTP_PORT')
    await new Promise<void>((resolve) => sink.server.listen(port, host, resolve))
    sink.port = (sink.server.server.address() as AddressInfo).port
    return sink
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}
