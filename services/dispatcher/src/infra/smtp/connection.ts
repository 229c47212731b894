import { isIP, connect as netConnect, type Socket } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import { ReplyLines } from '../../domain/reply-lines.js'
import {
  amongUnsentUtf8,
  asciiEnvelope,
  closingReply,
  dataBlock,
  envelopeAddress,
  hasEightBit,
  NO_SMTPUTF8,
  needsUtf8,
  positive,
  rcptRefusals,
  type SmtpReply,
  type SmtpTransaction,
  withUnsentUtf8,
} from '../../domain/smtp-transaction.js'
import { login, PlainLoginRefused } from './login.js'
import { ClaimNotHeld, type Fence, SendAborted, SmtpConnectionError, type SmtpOptions } from './options.js'

export { ClaimNotHeld, type Fence, SendAborted, SmtpConnectionError, type SmtpOptions }

/**
 * One SMTP session with the relay, sending one message at a time (RFC 5321). Where the relay offers
 * PIPELINING (RFC 2920) a message costs two round trips and two writes: MAIL FROM, every RCPT TO
 * and DATA together, then the message and its final dot; otherwise each command waits for its
 * answer. nodemailer took four round trips and five writes per message, and they were a fifth of the
 * dispatcher's CPU time (bench/README.md).
 */
export class SmtpConnection {
  private socket: Socket
  private readonly reading = new ReplyLines()
  /** Replies read and not yet taken, and the takers waiting for one. */
  private readonly replies: SmtpReply[] = []
  private readonly takers: Array<{ resolve: (r: SmtpReply) => void; reject: (e: Error) => void }> = []
  /** Replies owed for commands written; one arriving when none is owed ends the session. */
  private owed = 0
  private failure: SmtpConnectionError | null = null
  private capabilities = new Set<string>()
  private authMethods: string[] = []
  private bodySent = false
  /** Resolves writeMessage's wait when the session ends before the message left. */
  private flushed: (() => void) | null = null
  /** Opening or sending: a silence now is a stuck relay, not an idle session. */
  private busy = true
  /**
   * Set by the owner (the pool): called once when the session ends, however it ends (quit() and
   * fail() each run it only when they set `failure`, which nothing clears).
   */
  onClosed: () => void = () => undefined

  private constructor(
    private readonly opts: SmtpOptions,
    socket: Socket,
  ) {
    this.socket = socket
    this.attach(socket)
    opts.signal?.addEventListener('abort', this.onAbort)
  }

  get usable(): boolean {
    return this.failure === null
  }

  /**
   * Connects, reads the greeting, says EHLO, upgrades with STARTTLS as `starttls` says, logs in:
   * over TLS, or in clear text only with `starttls: 'never'` (PlainLoginRefused).
   */
  static async open(opts: SmtpOptions): Promise<SmtpConnection> {
    const servername = isIP(opts.host) ? undefined : opts.host
    const socket = opts.secure
      ? tlsConnect({ ...opts.tls, host: opts.host, port: opts.port, servername })
      : netConnect({ host: opts.host, port: opts.port })
    // Commands are small writes: with Nagle's algorithm on they wait for the relay's delayed ACK.
    socket.setNoDelay(true)
    const c = new SmtpConnection(opts, socket)
    try {
      c.owed++
      c.expect(await c.take(), 220, 'greeting')
      await c.hello()
      const starttls = opts.starttls ?? 'offered'
      if (!opts.secure && starttls !== 'never') {
        if (c.capabilities.has('STARTTLS')) {
          c.expect(await c.command('STARTTLS'), 220, 'STARTTLS')
          await c.upgrade(servername, opts.tls)
          await c.hello()
        } else if (starttls === 'required') {
          throw new SmtpConnectionError(
            'the relay does not offer STARTTLS, which SMTP_STARTTLS=required asks for',
          )
        } else if (opts.auth) {
          // A man in the middle strips STARTTLS from EHLO to read the password: only `never` says so.
          throw new PlainLoginRefused()
        }
      }
      if (opts.auth) await login(opts.auth, c.authMethods, (line) => c.command(line))
      c.busy = false
      return c
    } catch (err) {
      c.fail(err instanceof SmtpConnectionError ? err : new SmtpConnectionError((err as Error).message))
      throw c.failure
    }
  }

  /**
   * Sends one message. Resolves with whatever the relay answered (refusals included); rejects with
   * an SmtpConnectionError when the session broke, after which the connection is unusable.
   * `fence`, asked right before the final dot, can give the send up there (ClaimNotHeld).
   */
  async send(envelope: { from: string; to: string[] }, raw: Buffer, fence?: Fence): Promise<SmtpTransaction> {
    if (this.failure) throw this.failure
    const from = envelopeAddress(envelope.from)
    const to = envelope.to.map(envelopeAddress)
    if (this.capabilities.has('SMTPUTF8') || ![from, ...to].some(needsUtf8))
      return this.transaction(from, to, raw, fence)
    const ascii = asciiEnvelope(from, to)
    if (!ascii) return { mail: NO_SMTPUTF8, rcpt: [], data: null, final: null }
    try {
      return withUnsentUtf8(to, await this.transaction(from, ascii, raw, fence))
    } catch (err) {
      // The refusals are the ASCII recipients': placed among all of the envelope's.
      if (!(err instanceof SmtpConnectionError) || err instanceof SendAborted || !err.refused.length)
        throw err
      throw new SmtpConnectionError(err.message, err.code, err.bodySent, amongUnsentUtf8(to, err.refused))
    }
  }

  private async transaction(from: string, to: string[], raw: Buffer, fence?: Fence) {
    this.busy = true
    this.bodySent = false
    let params = ''
    if (this.capabilities.has('SIZE')) params += ` SIZE=${raw.length}`
    if (this.capabilities.has('8BITMIME') && hasEightBit(raw)) params += ' BODY=8BITMIME'
    if (this.capabilities.has('SMTPUTF8') && [from, ...to].some(needsUtf8)) params += ' SMTPUTF8'
    const mailCommand = `MAIL FROM:<${from}>${params}`
    const t: SmtpTransaction = { mail: { code: 0, text: '' }, rcpt: [], data: null, final: null }
    try {
      if (this.capabilities.has('PIPELINING')) {
        this.write([mailCommand, ...to.map((a) => `RCPT TO:<${a}>`), 'DATA'], to.length + 2)
        t.mail = await this.take()
        for (let i = 0; i < to.length; i++) t.rcpt.push(await this.take())
        t.data = await this.take()
      } else {
        t.mail = await this.command(mailCommand)
        if (positive(t.mail)) {
          for (const a of to) t.rcpt.push(await this.command(`RCPT TO:<${a}>`))
          if (t.rcpt.some(positive)) t.data = await this.command('DATA')
        }
      }
      if (closingReply(t)) throw new SmtpConnectionError('the relay is closing the session')
      if (t.data?.code === 354) {
        if (positive(t.mail) && t.rcpt.some(positive)) {
          // In the same tick as the write: a claim that may no longer be ours ends the session (below)
          // with the dot unsent, and the relay discards the transaction (RFC 5321 3.8).
          if (fence && !fence()) throw new ClaimNotHeld()
          await this.writeMessage(raw)
          t.final = await this.take(this.opts.dataTimeoutMs)
        } else {
          // DATA accepted with nobody to send to (RFC 2920 3.1): end it with an empty message, which
          // no relay has to scan (the usual time-out).
          this.write(['.'], 1)
          await this.take()
        }
      }
      if (closingReply(t)) throw new SmtpConnectionError('the relay is closing the session')
      // A transaction left open (recipients refused, DATA refused) is reset for the next message.
      if (t.final === null) await this.reset()
      this.busy = false
      return t
    } catch (err) {
      const e = err instanceof SmtpConnectionError ? err : new SmtpConnectionError((err as Error).message)
      this.fail(e)
      // 421: the relay is closing the session (RFC 5321 3.8): shutting down or overloaded (a breaker
      // failure), out of quota (not one: breaker.ts), or done with our refused recipients (Postfix's
      // "too many errors"), whose refusals stand. A reused session that gets it is replaced by the
      // pool; the message was not taken, whatever the stage.
      const closing = closingReply(t)
      if (closing)
        throw new SmtpConnectionError(closing.text, closing.code, false, rcptRefusals(t, to.length))
      // Refused outright before the session broke (a relay may hang up after a 5xx to MAIL FROM):
      // that answer is the outcome, not the broken session.
      const answered =
        t.mail.code !== 0 && (!positive(t.mail) || (t.rcpt.length === to.length && !t.rcpt.some(positive)))
      if (answered) return t
      if (e instanceof SendAborted) throw e
      throw new SmtpConnectionError(e.message, e.code, this.bodySent, rcptRefusals(t, to.length))
    }
  }

  /** RSET after a transaction left open. A session that cannot reset is closed; the answers stand. */
  private async reset(): Promise<void> {
    try {
      const reply = await this.command('RSET')
      if (reply.code !== 250) this.quit()
    } catch {
      // The session broke (fail() ran): the pool drops it.
    }
  }

  /**
   * Ends the session politely (QUIT); the socket is destroyed if the relay does not close it.
   * `reason` is what a send still given this session rejects with.
   */
  quit(reason = new SmtpConnectionError('connection closed')): void {
    if (this.failure) return
    this.failure = reason
    this.socket.end('QUIT\r\n')
    setTimeout(() => this.socket.destroy(), 1_000).unref()
    this.ended()
  }

  /**
   * `signal` aborted (the dispatcher is stopping). Before a message's final dot is written
   * (`bodySent`, set as it is handed to the socket, together with the whole message) the session
   * ends at once: the relay never sees the dot, discards the transaction, and the send rejects
   * with SendAborted (writeMessage checks `failure` first). After it, the relay may have the
   * message and only its answer tells: that answer is awaited, up to `dataTimeoutMs` as ever. An
   * idle session may have just been handed to a send that has not written yet: it gets SendAborted.
   */
  private readonly onAbort = (): void => {
    if (!this.busy) this.quit(new SendAborted())
    else if (!this.bodySent) this.fail(new SendAborted())
  }

  private ended(): void {
    this.opts.signal?.removeEventListener('abort', this.onAbort)
    this.onClosed()
  }

  private attach(socket: Socket): void {
    socket.setEncoding('utf8')
    socket.setTimeout(this.opts.timeoutMs)
    socket.on('data', this.onData)
    socket.on('error', this.onError)
    socket.on('close', this.onClose)
    socket.on('timeout', this.onTimeout)
  }

  private detach(socket: Socket): void {
    socket.off('data', this.onData)
    socket.off('error', this.onError)
    socket.off('close', this.onClose)
    socket.off('timeout', this.onTimeout)
  }

  private readonly onData = (chunk: string): void => {
    const { replies, error } = this.reading.push(chunk)
    for (const reply of replies) {
      if (this.owed === 0) {
        // Said without being asked (a 421 before closing an idle session): the session is over.
        this.fail(new SmtpConnectionError(reply.text, reply.code))
        return
      }
      this.owed--
      const taker = this.takers.shift()
      if (taker) taker.resolve(reply)
      else this.replies.push(reply)
    }
    if (error) this.fail(new SmtpConnectionError(error))
  }

  private readonly onError = (err: Error): void => {
    this.fail(new SmtpConnectionError(`${(err as NodeJS.ErrnoException).code ?? 'error'}: ${err.message}`))
  }

  private readonly onClose = (): void => {
    this.fail(new SmtpConnectionError('connection closed by the relay'))
  }

  private readonly onTimeout = (): void => {
    // Waiting for an answer: the relay is stuck. Idle in the pool: close it, a new one is cheap.
    if (this.busy) this.fail(new SmtpConnectionError(`no answer from the relay in ${this.socket.timeout} ms`))
    else this.quit()
  }

  private fail(err: SmtpConnectionError): void {
    if (this.failure) return
    this.failure = err
    for (const t of this.takers.splice(0)) t.reject(err)
    this.flushed?.()
    this.socket.destroy()
    this.ended()
  }

  /**
   * The next reply, which must be whole within `ms`: the socket's inactivity time-out alone let a
   * relay sending a continuation line now and then hold the message (and its pool slot) for ever.
   * A wait longer than the inactivity time-out (the final dot's) stretches that one meanwhile.
   */
  private take(ms = this.opts.timeoutMs): Promise<SmtpReply> {
    const r = this.replies.shift()
    if (r) return Promise.resolve(r)
    if (this.failure) return Promise.reject(this.failure)
    if (ms !== this.opts.timeoutMs) this.socket.setTimeout(ms)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => this.fail(new SmtpConnectionError(`no complete answer from the relay in ${ms} ms`)),
        ms,
      )
      const done = () => {
        clearTimeout(timer)
        if (ms !== this.opts.timeoutMs) this.socket.setTimeout(this.opts.timeoutMs)
      }
      this.takers.push({
        resolve: (reply) => {
          done()
          resolve(reply)
        },
        reject: (err) => {
          done()
          reject(err)
        },
      })
    })
  }

  private write(commands: string[], owed: number): void {
    if (this.failure) throw this.failure
    this.owed += owed
    this.socket.write(`${commands.join('\r\n')}\r\n`)
  }

  /**
   * Writes the message and its final dot; resolves once they left (or the session ended), so
   * that the wait for the answer does not count the time a large message takes to upload.
   */
  private writeMessage(raw: Buffer): Promise<void> {
    if (this.failure) throw this.failure
    this.owed++
    const parts = dataBlock(raw)
    const written = new Promise<void>((resolve) => {
      this.flushed = resolve
      // One writev for the message and its final dot.
      this.socket.cork()
      for (let i = 0; i < parts.length; i++)
        this.socket.write(parts[i]!, i === parts.length - 1 ? () => resolve() : undefined)
      this.bodySent = true
      this.socket.uncork()
    })
    return written.finally(() => {
      this.flushed = null
    })
  }

  private command(line: string): Promise<SmtpReply> {
    this.write([line], 1)
    return this.take()
  }

  private expect(reply: SmtpReply, code: number, what: string): void {
    if (reply.code !== code)
      throw new SmtpConnectionError(`${what} refused: ${reply.text.replace(/\s+/g, ' ')}`, reply.code)
  }

  /** EHLO (HELO for a relay that does not know it), reading the extensions offered. */
  private async hello(): Promise<void> {
    const name = this.clientName()
    let reply = await this.command(`EHLO ${name}`)
    if (reply.code >= 500 && reply.code < 600) {
      // A HELO answer has one line: no extensions below.
      reply = await this.command(`HELO ${name}`)
    }
    this.expect(reply, 250, 'EHLO')
    const lines = reply.text.split('\n').slice(1)
    this.capabilities = new Set(lines.map((l) => l.slice(4).split(' ')[0]!.toUpperCase()))
    const auth = lines.find((l) => /^AUTH[ =]/i.test(l.slice(4)))
    this.authMethods = auth ? auth.slice(9).toUpperCase().split(/\s+/) : []
  }

  /** The address literal of our end of the connection (RFC 5321 4.1.3), as EHLO's argument. */
  private clientName(): string {
    const local = this.socket.localAddress ?? '127.0.0.1'
    return isIP(local) === 6 ? `[IPv6:${local}]` : `[${local.replace(/^::ffff:/, '')}]`
  }

  private async upgrade(servername: string | undefined, tls: SmtpOptions['tls']): Promise<void> {
    const plain = this.socket
    this.detach(plain)
    // Anything the relay sent after its 220 arrived in plain text, where a man in the middle can
    // write it, and would be read as the first answer inside TLS (RFC 3207 section 6): end here.
    if (!this.reading.empty || this.replies.length > 0)
      throw new SmtpConnectionError('the relay sent more after its STARTTLS answer (RFC 3207)')
    const secure = tlsConnect({ ...tls, socket: plain, servername })
    this.socket = secure
    this.attach(secure)
    await new Promise<void>((resolve, reject) => {
      secure.once('secureConnect', resolve)
      secure.once('error', reject)
      secure.once('close', () => reject(this.failure ?? new Error('connection closed during TLS')))
    })
  }
}
