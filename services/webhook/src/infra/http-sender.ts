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
 * Idle connections are closed after this long: below the usual server keep-alive time-outs (Node
 * 5 s, nginx 75 s), so a receiver rarely closes a connection we are about to reuse.
 */
const IDLE_SOCKET_MS = 4_000

/** Errors of a reused connection that the receiver closed while it sat idle. */
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED'])

/**
 * POSTs one delivery. 2xx within the time-out is success; any other status (3xx included:
 * redirects are never followed), a connection error or the time-out is a failure.
 *
 * Connections to an endpoint are kept alive and reused: a new TCP (and TLS) connection per
 * delivery costs the receiver and us a handshake each time and, at a few hundred deliveries per
 * second to one host, fills the port range with TIME_WAIT sockets. A reused connection that turns
 * out to have been closed by the receiver before it answered is retried once on a fresh one (the
 * usual keep-alive race; deliveries are at least once, receivers deduplicate by event id).
 */
export class HttpSender {
  private readonly agents = {
    http: new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS, scheduling: 'lifo' }),
    https: new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS, scheduling: 'lifo' }),
  }

  constructor(private readonly opts: { timeoutMs: number; allowPrivate: boolean }) {}

  async post(rawUrl: string, body: string, headers: Record<string, string>): Promise<SendResult> {
    const started = Date.now()
    const first = await this.request(rawUrl, body, headers, this.opts.timeoutMs)
    if (!first.staleSocket) return first.result
    const left = Math.max(1, this.opts.timeoutMs - (Date.now() - started))
    return (await this.request(rawUrl, body, headers, left)).result
  }

  private request(
    rawUrl: string,
    body: string,
    headers: Record<string, string>,
    timeoutMs: number,
  ): Promise<{ result: SendResult; staleSocket?: boolean }> {
    let url: URL
    try {
      url = new URL(rawUrl)
    } catch {
      return Promise.resolve({
        result: { outcome: 'failure', responseCode: null, responseBody: 'invalid url' },
      })
    }
    if (!this.opts.allowPrivate) {
      const reason = literalBlockReason(url)
      if (reason)
        return Promise.resolve({
          result: { outcome: 'blocked', responseCode: null, responseBody: `blocked: ${reason}` },
        })
    }
    const isHttps = url.protocol === 'https:'
    return new Promise((resolve) => {
      let settled = false
      let status: number | null = null
      const chunks: Buffer[] = []
      let read = 0
      /** The answer was read to its end: the connection goes back to the agent for reuse. */
      let ended = false
      const finish = (r: SendResult, staleSocket = false) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        // Anything else (time-out, cut-off body, error) closes the connection.
        if (!ended) req.destroy()
        resolve({ result: r, staleSocket })
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
      }, timeoutMs)
      req.on('response', (res) => {
        status = res.statusCode ?? null
        res.on('data', (c: Buffer) => {
          if (read >= MAX_READ_BYTES) return
          chunks.push(c)
          read += c.length
          if (read >= MAX_READ_BYTES) finish(fromResponse())
        })
        res.on('end', () => {
          ended = true
          finish(fromResponse())
        })
        res.on('error', () => finish(fromResponse()))
      })
      req.on('error', (err: Error & { code?: string }) => {
        if (err instanceof BlockedAddressError)
          finish({ outcome: 'blocked', responseCode: null, responseBody: `blocked: ${err.message}` })
        else if (status !== null) finish(fromResponse())
        else if (req.reusedSocket && STALE_SOCKET_CODES.has(err.code ?? ''))
          finish(
            { outcome: 'failure', responseCode: null, responseBody: `connection error: ${err.code}` },
            true,
          )
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
