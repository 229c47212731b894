import type { AddressInfo } from 'node:net'
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net'
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server'

/** How the relay answers a recipient or a finished message: accept, or an SMTP error reply. */
export type Answer = 'accept' | { code: number; message: string }

export interface Delivered {
  envelopeFrom: string
  envelopeTo: string[]
  raw: Buffer
  /** The email id carried in Message-ID `<emailId@domain>`, if any. */
  emailId: string | null
}

const reject = (a: Exclude<Answer, 'accept'>) => Object.assign(new Error(a.message), { responseCode: a.code })

/**
 * A real SMTP relay for tests (npm `smtp-server`, no TLS, no auth needed) that records every
 * message it accepted. A TCP front door on the published port lets a test take the relay "down"
 * (`setMode('drop')`: connections are greeted, then dropped at the first command, and open ones are
 * cut) and bring it back, without the port changing under the dispatcher.
 */
export class TestRelay {
  readonly delivered: Delivered[] = []
  /** TCP connections the dispatcher opened to the relay. */
  connections = 0
  /** Connections cut by the front door (`setMode('drop')`, `dropConnections`): the outage was felt. */
  dropped = 0
  /** The answer to MAIL FROM (the sender's address, lower-cased). */
  mailFrom: (address: string) => Answer = () => 'accept'
  /** The answer to RCPT TO; `session.id` tells sessions apart (a relay counting refusals per session). */
  rcpt: (address: string, session: SMTPServerSession) => Answer = () => 'accept'
  data: (envelopeTo: string[]) => Answer = () => 'accept'
  /** Finished messages waiting for `pause()` to be released before they are answered. */
  held = 0
  /** A slow relay: each finished message is answered this long after it arrived. */
  answerDelayMs = 0
  /**
   * A relay that queues a message as soon as its final dot arrives and answers later (a slow
   * disk, a scan after the commit): `pause()` and `answerDelayMs` hold just the answer, and a
   * client gone before it still has the message delivered, as with a real MTA.
   */
  commitFirst = false
  /** RCPT TO commands waiting for `holdRcpt()` to be released before they are answered. */
  rcptHeld = 0
  /**
   * The next this many messages have their connection cut as their first bytes arrive, before
   * their final dot: the relay never has them (a connection lost in the middle of DATA).
   */
  cutInData = 0
  private hold: Promise<void> | null = null
  private rcptHold: Promise<void> | null = null
  private mode: 'up' | 'drop' = 'up'
  private dropsLeft = 0
  private readonly open = new Set<Socket>()
  private readonly closedSessions = new Set<string>()
  private smtp!: SMTPServer
  private front!: Server
  port = 0

  /** `options`: smtp-server settings on top of these, e.g. `hideSMTPUTF8` for a relay without it. */
  static async start(options: Partial<SMTPServerOptions> = {}): Promise<TestRelay> {
    const r = new TestRelay(options)
    await r.listen()
    return r
  }

  /** Not listening yet: `listen()` opens it (`useStack` makes one before its hooks run). */
  constructor(private readonly options: Partial<SMTPServerOptions> = {}) {}

  async listen(): Promise<void> {
    this.smtp = new SMTPServer({
      disabledCommands: ['STARTTLS'],
      authOptional: true,
      // Stopping must not wait out smtp-server's default 30 s grace for open sessions.
      closeTimeout: 500,
      logger: false,
      size: 50 * 1024 * 1024,
      onMailFrom: (address, _s, cb) => {
        const a = this.mailFrom(address.address.toLowerCase())
        cb(a === 'accept' ? null : reject(a))
      },
      onRcptTo: (address, session, cb) => {
        const answer = () => {
          const a = this.rcpt(address.address.toLowerCase(), session)
          cb(a === 'accept' ? null : reject(a))
        }
        const hold = this.rcptHold
        if (!hold) return answer()
        this.rcptHeld++
        void hold.then(() => {
          this.rcptHeld--
          answer()
        })
      },
      onData: (stream, session, cb) => {
        const chunks: Buffer[] = []
        let cut = false
        stream.on('data', (c: Buffer) => {
          chunks.push(c)
          if (cut || this.cutInData === 0 || chunks.length > 1) return
          this.cutInData--
          cut = true
          this.dropped += this.open.size
          for (const s of this.open) s.destroy()
        })
        stream.on('end', async () => {
          if (cut) return cb(new Error('connection cut'))
          const envelopeTo = session.envelope.rcptTo.map((a) => a.address.toLowerCase())
          const take = () => {
            const a = this.data(envelopeTo)
            if (a !== 'accept') return a
            const raw = Buffer.concat(chunks)
            this.delivered.push({
              envelopeFrom: envelopeFromOf(session),
              envelopeTo,
              raw,
              emailId: emailIdOf(raw),
            })
            return a
          }
          const committed = this.commitFirst ? take() : null
          if (this.answerDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.answerDelayMs))
          if (this.hold) {
            this.held++
            await this.hold
            this.held--
          }
          // A client that went away before we answered never learns the outcome: like a real
          // MTA that had not yet committed the message, discard it (unless committed on arrival).
          if (committed === null && this.closedSessions.has(session.id)) return cb(new Error('client gone'))
          const a = committed ?? take()
          cb(a === 'accept' ? null : reject(a))
        })
      },
      onClose: (session) => {
        this.closedSessions.add(session.id)
      },
      ...this.options,
    })
    // The front door cuts connections on purpose; the inner server then sees resets, which it
    // reports as 'error' events (unhandled, they would end the test process).
    this.smtp.on('error', () => undefined)
    await new Promise<void>((resolve) => this.smtp.listen(0, '127.0.0.1', resolve))
    const inner = (this.smtp.server.address() as AddressInfo).port
    this.front = createServer((client) => {
      this.connections++
      this.open.add(client)
      client.on('close', () => this.open.delete(client))
      client.on('error', () => client.destroy())
      if (this.mode === 'drop' || this.dropsLeft > 0) {
        if (this.mode !== 'drop') this.dropsLeft--
        this.dropped++
        client.write('220 relay.test ESMTP\r\n')
        client.once('data', () => client.destroy())
        return
      }
      const upstream = tcpConnect(inner, '127.0.0.1')
      upstream.on('error', () => client.destroy())
      client.on('close', () => upstream.destroy())
      upstream.on('close', () => client.destroy())
      client.pipe(upstream).pipe(client)
    })
    await new Promise<void>((resolve) => this.front.listen(0, '127.0.0.1', resolve))
    this.port = (this.front.address() as AddressInfo).port
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`
  }

  /** `drop`: the relay is down (every connection, open or new, is cut); `up`: it answers again. */
  setMode(mode: 'up' | 'drop'): void {
    this.mode = mode
    if (mode !== 'drop') return
    this.dropped += this.open.size
    for (const s of this.open) s.destroy()
  }

  /**
   * Stops answering finished messages until the returned function is called: senders wait for
   * the relay's verdict with their message not yet accepted.
   */
  pause(): () => void {
    let release!: () => void
    this.hold = new Promise<void>((resolve) => {
      release = resolve
    })
    return () => {
      this.hold = null
      release()
    }
  }

  /** Leaves RCPT TO unanswered until the returned function is called: no message goes out meanwhile. */
  holdRcpt(): () => void {
    let release!: () => void
    this.rcptHold = new Promise<void>((resolve) => {
      release = resolve
    })
    return () => {
      this.rcptHold = null
      release()
    }
  }

  /** A short outage: cuts every open connection, then drops the next `n` new ones. */
  dropConnections(n: number): void {
    this.dropsLeft = n
    for (const s of this.open) s.destroy()
  }

  /** TCP connections open right now. */
  get openConnections(): number {
    return this.open.size
  }

  /** Deliveries per `<emailId> <recipient>`, to check that nothing arrived twice. */
  deliveryCounts(): Map<string, number> {
    const counts = new Map<string, number>()
    for (const d of this.delivered) {
      for (const to of d.envelopeTo) {
        const k = `${d.emailId} ${to}`
        counts.set(k, (counts.get(k) ?? 0) + 1)
      }
    }
    return counts
  }

  forEmail(emailId: string): Delivered[] {
    return this.delivered.filter((d) => d.emailId === emailId)
  }

  async stop(): Promise<void> {
    for (const s of this.open) s.destroy()
    await new Promise<void>((resolve) => this.front.close(() => resolve()))
    await new Promise<void>((resolve) => this.smtp.close(() => resolve()))
  }
}

function envelopeFromOf(session: SMTPServerSession): string {
  const from = session.envelope.mailFrom
  return from ? from.address : ''
}

function emailIdOf(raw: Buffer): string | null {
  const end = raw.indexOf('\r\n\r\n')
  const head = raw.subarray(0, end < 0 ? raw.length : end).toString('latin1')
  const m = /^message-id:\s*<(email_[0-9A-Z]{26})@/im.exec(head)
  return m ? m[1]! : null
}
