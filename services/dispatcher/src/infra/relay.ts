import { mkdir, rename, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { Logger, Metrics } from '@mailer/observability'
import nodemailer from 'nodemailer'
import type Mail from 'nodemailer/lib/mailer'
import { RenderError } from '../domain/message.js'
import type { RecipientReply } from '../domain/smtp-reply.js'
import { type BreakerOptions, relayBreaker } from './breaker.js'
import { noDelaySocket } from './no-delay-socket.js'
import { repliesFromError, repliesFromInfo, type SmtpError, type SmtpInfo } from './smtp-replies.js'

export interface Envelope {
  from: string
  to: string[]
}

/** Where rendered messages go: the SMTP relay, or `.eml` files in development. */
export interface Relay {
  readonly provider: 'smtp' | 'file'
  /** One reply per envelope recipient; never throws for what the relay said or failed to say. */
  deliver(emailId: string, envelope: Envelope, raw: Buffer): Promise<RecipientReply[]>
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
      return info.message as Buffer
    } catch (err) {
      throw new RenderError(`cannot render the message: ${(err as Error).message}`)
    }
  }
}

export interface SmtpRelayOptions {
  url: string
  poolSize: number
  timeoutSeconds: number
  breaker: BreakerOptions
}

export class SmtpRelay implements Relay {
  readonly provider = 'smtp' as const
  private readonly transport
  private readonly breaker

  constructor(opts: SmtpRelayOptions, metrics: Metrics, logger: Logger) {
    const url = new URL(opts.url)
    const secure = url.protocol === 'smtps:'
    const timeoutMs = Math.round(opts.timeoutSeconds * 1000)
    this.transport = nodemailer.createTransport({
      host: url.hostname,
      port: Number(url.port) || (secure ? 465 : 587),
      secure,
      ...(url.username
        ? { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } }
        : {}),
      pool: true,
      maxConnections: opts.poolSize,
      // A connection that drops mid-message fails the send (we defer and retry it ourselves)
      // instead of nodemailer re-sending it behind our back, possibly a second time.
      maxRequeues: 0,
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
      getSocket: noDelaySocket(url.hostname, Number(url.port) || (secure ? 465 : 587), timeoutMs),
    } as Parameters<typeof nodemailer.createTransport>[0])
    this.breaker = relayBreaker(
      (message: Mail.Options) => this.transport.sendMail(message) as Promise<SmtpInfo>,
      opts.breaker,
      metrics,
      logger,
    )
  }

  async deliver(_emailId: string, envelope: Envelope, raw: Buffer): Promise<RecipientReply[]> {
    try {
      const info = await this.breaker.fire({ envelope, raw })
      return repliesFromInfo(envelope.to, info)
    } catch (err) {
      return repliesFromError(envelope.to, err as SmtpError)
    }
  }

  async close(): Promise<void> {
    this.breaker.shutdown()
    this.transport.close()
  }
}

/** Development transport: each message becomes `<dir>/<emailId>.eml`. */
export class FileRelay implements Relay {
  readonly provider = 'file' as const
  private readonly dir: string

  constructor(dir: string) {
    this.dir = resolve(dir)
  }

  async deliver(emailId: string, envelope: Envelope, raw: Buffer): Promise<RecipientReply[]> {
    const path = join(this.dir, `${emailId}.eml`)
    try {
      await mkdir(this.dir, { recursive: true })
      // Written aside and renamed so a reader never sees half a message.
      const tmp = `${path}.${process.pid}.tmp`
      await writeFile(tmp, raw)
      await rename(tmp, path)
    } catch (err) {
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

  async close(): Promise<void> {}
}
