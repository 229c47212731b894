import { mkdir, rename, rm, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { Logger, Metrics } from '@mailer/observability'
import nodemailer from 'nodemailer'
import type Mail from 'nodemailer/lib/mailer'
import { withCrlf } from '../domain/line-ends.js'
import { RenderError } from '../domain/message.js'
import { type RecipientReply, replyText } from '../domain/smtp-reply.js'
import { brokenReplies, repliesOf } from '../domain/smtp-transaction.js'
import { type BreakerOptions, breakerOpen, relayBreaker } from './breaker.js'
import { ClaimNotHeld, type Fence, SendAborted, SmtpConnectionError } from './smtp/connection.js'
import { PlainLoginRefused } from './smtp/login.js'
import { SmtpPool } from './smtp/pool.js'

export { ClaimNotHeld, type Fence, SendAborted }

export interface Envelope {
  from: string
  to: string[]
}

/** Where rendered messages go: the SMTP relay, or `.eml` files in development. */
export interface Relay {
  readonly provider: 'smtp' | 'file'
  /**
   * One reply per envelope recipient; never throws for what the relay said or failed to say.
   * Throws SendAborted once `stopSending()` was called and the message never reached the relay,
   * and ClaimNotHeld when `fence`, asked right before the message is handed over for good (the
   * final dot; the file's rename), said no.
   */
  deliver(emailId: string, envelope: Envelope, raw: Buffer, fence?: Fence): Promise<RecipientReply[]>
  /**
   * The dispatcher is stopping: sends not yet past their final dot are given up (SendAborted),
   * those past it still get the relay's answer.
   */
  stopSending(): void
  close(): Promise<void>
}

/**
 * Renders a message to its final MIME bytes, DKIM signature included, without sending it, so a
 * bad stored email (or key) is told apart from a relay problem and never trips the breaker.
 */
export class Renderer {
  private readonly transport = nodemailer.createTransport({
    streamTransport: true,
    buffer: true,
    newline: 'windows',
  })

  async render(message: Mail.Options): Promise<Buffer> {
    try {
      const info = await this.transport.sendMail(message)
      return withCrlf(info.message as Buffer)
    } catch (err) {
      throw new RenderError(`cannot render the message: ${(err as Error).message}`)
    }
  }
}

export interface SmtpRelayOptions {
  url: string
  starttls: 'offered' | 'required' | 'never'
  /** False: the relay's certificate is not checked (SMTP_TLS_VERIFY=false). */
  verifyTls: boolean
  poolSize: number
  timeoutSeconds: number
  /** The longest wait for the answer to a message's final dot (SMTP_DATA_TIMEOUT_SECONDS). */
  dataTimeoutSeconds: number
  breaker: BreakerOptions
}

export class SmtpRelay implements Relay {
  readonly provider = 'smtp' as const
  private readonly pool: SmtpPool
  private readonly breaker
  private stopping = false

  constructor(
    opts: SmtpRelayOptions,
    metrics: Metrics,
    private readonly logger: Logger,
  ) {
    const url = new URL(opts.url)
    const secure = url.protocol === 'smtps:'
    if (!secure && url.username && opts.starttls === 'never')
      logger.warn('SMTP_STARTTLS=never: the SMTP_URL credentials go to the relay in clear text')
    this.pool = new SmtpPool({
      host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: Number(url.port) || (secure ? 465 : 587),
      secure,
      starttls: opts.starttls,
      ...(opts.verifyTls ? {} : { tls: { rejectUnauthorized: false } }),
      ...(url.username
        ? { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } }
        : {}),
      timeoutMs: Math.round(opts.timeoutSeconds * 1000),
      dataTimeoutMs: Math.round(opts.dataTimeoutSeconds * 1000),
      size: opts.poolSize,
    })
    this.breaker = relayBreaker(
      (envelope: Envelope, raw: Buffer, fence?: Fence) => this.pool.send(envelope, raw, fence),
      opts.breaker,
      metrics,
      logger,
    )
  }

  async deliver(_emailId: string, envelope: Envelope, raw: Buffer, fence?: Fence): Promise<RecipientReply[]> {
    // Before the breaker: an open one would answer "relay unavailable" and count an attempt.
    if (this.stopping) throw new SendAborted()
    try {
      return repliesOf(envelope.to, await this.breaker.fire(envelope, raw, fence))
    } catch (err) {
      if (err instanceof SendAborted) throw err
      // An operator's matter (a relay without STARTTLS, or one stripped on the way): said where
      // they look, as well as in every deferred recipient's reply.
      if (err instanceof PlainLoginRefused) this.logger.error({ setting: 'SMTP_STARTTLS' }, err.message)
      // The relay gave no answer about this message: every recipient waits for a retry, but those
      // it had refused before the session broke, which keep that answer.
      const text = breakerOpen(err)
        ? 'relay unavailable (circuit breaker open)'
        : replyText((err as Error).message)
      if (!(err instanceof SmtpConnectionError)) return brokenReplies(envelope.to, [], { code: null, text })
      return brokenReplies(envelope.to, err.refused, { code: err.code, text })
    }
  }

  stopSending(): void {
    this.stopping = true
    this.pool.stop()
  }

  async close(): Promise<void> {
    this.breaker.shutdown()
    this.pool.close()
  }
}

/** Development transport: each message becomes `<dir>/<emailId>.eml`. */
export class FileRelay implements Relay {
  readonly provider = 'file' as const
  private readonly dir: string

  constructor(dir: string) {
    this.dir = resolve(dir)
  }

  async deliver(emailId: string, envelope: Envelope, raw: Buffer, fence?: Fence): Promise<RecipientReply[]> {
    const path = join(this.dir, `${emailId}.eml`)
    const tmp = `${path}.${process.pid}.tmp`
    try {
      await mkdir(this.dir, { recursive: true })
      // Written aside and renamed so a reader never sees half a message.
      await writeFile(tmp, raw)
      if (fence && !fence()) {
        await rm(tmp, { force: true })
        throw new ClaimNotHeld()
      }
      await rename(tmp, path)
    } catch (err) {
      if (err instanceof ClaimNotHeld) throw err
      // A full or read-only disk is a transient relay problem: defer and retry.
      const text = `cannot write ${path}: ${(err as Error).message}`
      return envelope.to.map((address) => ({ address, stage: 'connection', code: null, text }))
    }
    return envelope.to.map((address) => ({
      address,
      stage: 'message',
      code: 250,
      text: `250 saved to ${path}`,
    }))
  }

  /** A message is written and renamed in moments, and either is there or not: nothing to give up. */
  stopSending(): void {}

  async close(): Promise<void> {}
}
