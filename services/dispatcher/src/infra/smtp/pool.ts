import { setMaxListeners } from 'node:events'
import type { SmtpTransaction } from '../../domain/smtp-transaction.js'
import {
  type Fence,
  SendAborted,
  SmtpConnection,
  SmtpConnectionError,
  type SmtpOptions,
} from './connection.js'

interface Waiter {
  resolve: (c: SmtpConnection) => void
  reject: (e: Error) => void
}

/**
 * Up to `size` sessions with the relay, each sending one message at a time; a send waits for a
 * free session. Idle sessions close after the time-out (the relay would close them anyway) and are
 * opened again on demand.
 */
export class SmtpPool {
  private readonly idle: SmtpConnection[] = []
  private readonly waiting: Waiter[] = []
  /** Sessions open or being opened. */
  private live = 0
  private closing = false
  /** Every session listens to it (SmtpOptions.signal): `stop()` aborts it. */
  private readonly stopping = new AbortController()

  constructor(private readonly opts: SmtpOptions & { size: number }) {
    // One listener per session, up to `size` of them: not a leak to warn about.
    setMaxListeners(0, this.stopping.signal)
  }

  /**
   * Sends one message on a pooled session. A session the relay closed while it sat idle fails
   * before the message went out; that send is tried once more on a fresh session. Nothing is
   * ever sent again once its final dot went out (the relay may have the message), nor one given
   * up (SendAborted: stopping, or `fence` said no before the final dot).
   */
  async send(envelope: { from: string; to: string[] }, raw: Buffer, fence?: Fence): Promise<SmtpTransaction> {
    const first = await this.acquire()
    try {
      return await this.sendOn(first.connection, envelope, raw, fence)
    } catch (err) {
      if (!first.reused || !(err instanceof SmtpConnectionError) || err instanceof SendAborted) throw err
      if (err.bodySent || this.closing) throw err
    }
    return this.sendOn((await this.acquire(true)).connection, envelope, raw, fence)
  }

  private async sendOn(
    c: SmtpConnection,
    envelope: { from: string; to: string[] },
    raw: Buffer,
    fence: Fence | undefined,
  ): Promise<SmtpTransaction> {
    const t = await c.send(envelope, raw, fence)
    this.release(c)
    return t
  }

  /**
   * The dispatcher is stopping: new sends and those waiting for a session reject with
   * SendAborted, as do the sessions still opening or not yet past a message's final dot; a
   * session waiting for the answer to its dot gets it (SmtpConnection's onAbort).
   */
  stop(): void {
    this.closing = true
    for (const w of this.waiting.splice(0)) w.reject(new SendAborted())
    this.stopping.abort()
  }

  /** Stops (above), closes idle sessions at once and the others when their message is done. */
  close(): void {
    this.stop()
    for (const c of this.idle.splice(0)) c.quit()
  }

  private async acquire(fresh = false): Promise<{ connection: SmtpConnection; reused: boolean }> {
    if (this.closing) throw new SendAborted()
    if (!fresh) {
      // Most recently used first: the spare sessions stay idle and time out.
      for (let c = this.idle.pop(); c; c = this.idle.pop())
        if (c.usable) return { connection: c, reused: true }
    }
    if (this.live >= this.opts.size) {
      const connection = await new Promise<SmtpConnection>((resolve, reject) =>
        this.waiting.push({ resolve, reject }),
      )
      return { connection, reused: true }
    }
    this.live++
    let c: SmtpConnection
    try {
      c = await SmtpConnection.open({ ...this.opts, signal: this.stopping.signal })
    } catch (err) {
      this.freed()
      throw err
    }
    c.onClosed = () => {
      const i = this.idle.indexOf(c)
      if (i !== -1) this.idle.splice(i, 1)
      this.freed()
    }
    return { connection: c, reused: false }
  }

  private release(c: SmtpConnection): void {
    if (!c.usable) return
    if (this.closing) {
      c.quit()
      return
    }
    const w = this.waiting.shift()
    if (w) w.resolve(c)
    else this.idle.push(c)
  }

  /** A session ended (or never opened): someone waiting may open one in its place. */
  private freed(): void {
    this.live--
    const w = this.waiting.shift()
    if (w) this.acquire().then((a) => w.resolve(a.connection), w.reject)
  }
}
