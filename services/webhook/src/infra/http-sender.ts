import http from 'node:http'
import https from 'node:https'
import { WEBHOOK_RESPONSE_BODY_MAX } from '@mailer/contracts'
import type { AttemptOutcome } from '../domain/retry-schedule.js'
import { BlockedAddressError, guardedLookup, literalBlockReason } from './url-guard.js'

export interface SendResult {
  outcome: AttemptOutcome
  responseCode: number | null
  responseBody: string
}

/** Bytes read from an answer at most (the first 1,024 characters are kept). */
const MAX_READ_BYTES = 8 * 1024

const formatSeconds = (ms: number) => `${Number((ms / 1000).toFixed(3))}s`

/**
 * POSTs one delivery. 2xx within the time-out is success; any other status (3xx included:
 * redirects are never followed), a connection error or the time-out is a failure. Connections are
 * not reused, so a receiver closing an idle socket can never fail an attempt.
 */
export class HttpSender {
  private readonly agents = {
    http: new http.Agent({ keepAlive: false }),
    https: new https.Agent({ keepAlive: false }),
  }

  constructor(private readonly opts: { timeoutMs: number; allowPrivate: boolean }) {}

  post(rawUrl: string, body: string, headers: Record<string, string>): Promise<SendResult> {
    let url: URL
    try {
      url = new URL(rawUrl)
    } catch {
      return Promise.resolve({ outcome: 'failure', responseCode: null, responseBody: 'invalid url' })
    }
    if (!this.opts.allowPrivate) {
      const reason = literalBlockReason(url)
      if (reason)
        return Promise.resolve({ outcome: 'blocked', responseCode: null, responseBody: `blocked: ${reason}` })
    }
    const isHttps = url.protocol === 'https:'
    return new Promise<SendResult>((resolve) => {
      let settled = false
      let status: number | null = null
      const chunks: Buffer[] = []
      let read = 0
      const finish = (r: SendResult) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        req.destroy()
        resolve(r)
      }
      const fromResponse = (): SendResult => {
        const text = Buffer.concat(chunks).toString('utf8').slice(0, WEBHOOK_RESPONSE_BODY_MAX)
        const ok = status !== null && status >= 200 && status < 300
        return { outcome: ok ? 'success' : 'failure', responseCode: status, responseBody: text }
      }
      const req = (isHttps ? https : http).request(url, {
        method: 'POST',
        headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
        agent: isHttps ? this.agents.https : this.agents.http,
        ...(this.opts.allowPrivate ? {} : { lookup: guardedLookup }),
      })
      const timer = setTimeout(() => {
        // Headers in time decide the outcome; a body still trickling in is cut off.
        if (status !== null) finish(fromResponse())
        else
          finish({
            outcome: 'timeout',
            responseCode: null,
            responseBody: `timeout after ${formatSeconds(this.opts.timeoutMs)}`,
          })
      }, this.opts.timeoutMs)
      req.on('response', (res) => {
        status = res.statusCode ?? null
        res.on('data', (c: Buffer) => {
          if (read >= MAX_READ_BYTES) return
          chunks.push(c)
          read += c.length
          if (read >= MAX_READ_BYTES) finish(fromResponse())
        })
        res.on('end', () => finish(fromResponse()))
        res.on('error', () => finish(fromResponse()))
      })
      req.on('error', (err: Error & { code?: string }) => {
        if (err instanceof BlockedAddressError)
          finish({ outcome: 'blocked', responseCode: null, responseBody: `blocked: ${err.message}` })
        else if (status !== null) finish(fromResponse())
        else
          finish({
            outcome: 'failure',
            responseCode: null,
            responseBody: `connection error: ${err.code ?? err.message}`.slice(0, WEBHOOK_RESPONSE_BODY_MAX),
          })
      })
      req.end(body)
    })
  }

  close(): void {
    this.agents.http.destroy()
    this.agents.https.destroy()
  }
}
