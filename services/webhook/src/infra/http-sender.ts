import { setImmediate } from 'node:timers/promises'
import { WEBHOOK_RESPONSE_BODY_MAX } from '@mailer/contracts'
import { Agent, buildConnector } from 'undici'
import type { AttemptOutcome } from '../domain/retry-schedule.js'
import { answerBytes } from './answer-body.js'
import { skipUnaskedContinue } from './interim-continue.js'
import { guardedLookup, guardedLookupVia, literalBlockReason, type Resolver } from './url-guard.js'

export interface SendResult {
  outcome: AttemptOutcome
  responseCode: number | null
  responseBody: string
}

/** Bytes read from an answer at most (the first 1,024 characters are kept). */
const MAX_READ_BYTES = 8 * 1024

/** Decoded bytes enough for the kept characters: 4 per character at most in UTF-8. */
const MAX_DECODED_BYTES = 4 * WEBHOOK_RESPONSE_BODY_MAX

const formatSeconds = (ms: number) => `${Number((ms / 1000).toFixed(3))}s`

/**
 * The first `n` characters of `text`, a character being a code point: one outside the BMP (an
 * emoji) is two UTF-16 units, and cutting between them left a lone half, stored as U+FFFD.
 */
function firstChars(text: string, n: number): string {
  let end = 0
  for (let kept = 0; kept < n && end < text.length; kept++) end += text.codePointAt(end)! > 0xffff ? 2 : 1
  return text.slice(0, end)
}

/**
 * Idle connections are closed after this long: below the usual server keep-alive time-outs (Node
 * 5 s, nginx 75 s), so a receiver rarely closes a connection we are about to reuse.
 */
const IDLE_SOCKET_MS = 4_000

/**
 * Errors of a connection the receiver closed or reset before it answered (undici's own for a
 * clean close, the system's for the others): on a reused connection, the receiver closing it
 * while it sat idle.
 */
const CLOSED_SOCKET_CODES = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE', 'ECONNABORTED'])

/** Origins whose connections are counted at most; past it the counts start again (no retry meanwhile). */
const MAX_COUNTED_ORIGINS = 10_000

/** `https://user:pass@host/...`: the credentials as Basic authorization, as node:http sent them. */
function withUrlCredentials(url: URL, headers: Record<string, string>): Record<string, string> {
  if (!url.username && !url.password) return headers
  const user = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
  return { ...headers, authorization: `Basic ${Buffer.from(user).toString('base64')}` }
}

/**
 * POSTs one delivery. 2xx within the time-out is success; any other status (3xx included:
 * redirects are never followed), a connection error or the time-out is a failure. Credentials in
 * the URL (`https://user:pass@host/...`) are sent as Basic authorization. An answer compressed
 * with gzip, deflate or br is kept decoded (`answerBytes`): undici's `request`, unlike `fetch`,
 * hands the body over as it came. An unasked `100 Continue` before the answer is skipped
 * (`skipUnaskedContinue`): undici's parser would otherwise fail the connection on it.
 *
 * Connections to an endpoint are kept alive and reused: a new TCP (and TLS) connection per
 * delivery costs the receiver and us a handshake each time and, at a few hundred deliveries per
 * second to one host, fills the port range with TIME_WAIT sockets. A delivery whose reused
 * connection turns out to have been closed by the receiver before it answered is sent again once
 * on a fresh one (the usual keep-alive race; deliveries are at least once, receivers deduplicate
 * by event id). On a fresh connection such an error is the receiver's failure and is recorded as
 * one: sending again at once would only double the traffic to a receiver already in trouble.
 *
 * Through undici rather than node:http: 50-80 us of CPU per request instead of 115-125 us
 * (bench/README.md), on the path every delivery takes. No limit on connections per origin: the
 * worker's per-webhook and per-replica concurrency bound them. After a time-out or a cut-off body
 * undici closes that connection and opens a spare one to the origin (its own behaviour).
 */
export class HttpSender {
  private readonly agent: Agent
  /**
   * Connections opened per origin. undici does not tell which connection a request went out on:
   * a request during which no new connection to its origin was opened went out on a reused one.
   */
  private readonly connects = new Map<string, number>()
  /**
   * Encoded answers are decompressed one at a time: a brotli "zip bomb" can cost up to a tenth of
   * a second of a libuv thread (its 16 MiB window), and DNS lookups of every delivery share those
   * threads. Plain answers never wait for it.
   */
  private decoding: Promise<unknown> = Promise.resolve()

  /** `resolve`: the system's resolver unless given (a test's stand-in answers a rebound name). */
  constructor(private readonly opts: { timeoutMs: number; allowPrivate: boolean; resolve?: Resolver }) {
    // undici's own connector, as an options object would build it, with each new connection's
    // interim 100 answers skipped (interim-continue.ts).
    const connector = buildConnector({
      timeout: opts.timeoutMs + 1_000,
      // Checked at every connect, so a DNS answer changed after the webhook was saved (DNS
      // rebinding) cannot reach internal hosts.
      ...(opts.allowPrivate ? {} : { lookup: opts.resolve ? guardedLookupVia(opts.resolve) : guardedLookup }),
    })
    this.agent = new Agent({
      keepAliveTimeout: IDLE_SOCKET_MS,
      keepAliveMaxTimeout: IDLE_SOCKET_MS,
      // The attempt's own timer bounds the whole request (connect, headers and body); undici's
      // timers are off, or a backstop for the connect: its coarse timer fires up to half a
      // second early and would turn a slow handshake into a connection error.
      headersTimeout: 0,
      bodyTimeout: 0,
      connect: (options, callback) =>
        connector(options, (...args) => {
          if (args[1]) skipUnaskedContinue(args[1])
          callback(...args)
        }),
    })
    this.agent.on('connect', (origin) => {
      // A URL (with a trailing slash when printed): keyed by its origin, as requests are.
      const key = new URL(String(origin)).origin
      if (!this.connects.has(key) && this.connects.size >= MAX_COUNTED_ORIGINS) this.connects.clear()
      this.connects.set(key, (this.connects.get(key) ?? 0) + 1)
    })
  }

  async post(rawUrl: string, body: string, headers: Record<string, string>): Promise<SendResult> {
    const started = Date.now()
    const first = await this.request(rawUrl, body, headers, this.opts.timeoutMs)
    if (!first.staleSocket) return first.result
    const left = Math.max(1, this.opts.timeoutMs - (Date.now() - started))
    return (await this.request(rawUrl, body, headers, left)).result
  }

  private async request(
    rawUrl: string,
    body: string,
    headers: Record<string, string>,
    timeoutMs: number,
  ): Promise<{ result: SendResult; staleSocket?: boolean }> {
    let url: URL
    try {
      url = new URL(rawUrl)
    } catch {
      return { result: { outcome: 'failure', responseCode: null, responseBody: 'invalid url' } }
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return { result: { outcome: 'failure', responseCode: null, responseBody: 'invalid url' } }
    if (!this.opts.allowPrivate) {
      const reason = literalBlockReason(url)
      if (reason)
        return { result: { outcome: 'blocked', responseCode: null, responseBody: `blocked: ${reason}` } }
    }
    const origin = url.origin
    const connectsBefore = this.connects.get(origin) ?? 0
    const abort = new AbortController()
    const timer = setTimeout(() => abort.abort(), timeoutMs)
    let status: number | null = null
    let encoding: string | string[] | undefined
    const chunks: Buffer[] = []
    const fromResponse = async (complete: boolean): Promise<SendResult> => {
      const kept =
        encoding === undefined ? Buffer.concat(chunks) : await this.decode(encoding, chunks, complete)
      // A NUL in the answer would make the result unstorable (PostgreSQL refuses it): the attempt
      // could never be recorded, and its lease would bring it back again and again.
      const text = firstChars(kept.toString('utf8'), WEBHOOK_RESPONSE_BODY_MAX).replaceAll('\u0000', '\uFFFD')
      const ok = status !== null && status >= 200 && status < 300
      return { outcome: ok ? 'success' : 'failure', responseCode: status, responseBody: text }
    }
    try {
      const res = await this.agent.request({
        origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: withUrlCredentials(url, headers),
        body,
        signal: abort.signal,
      })
      status = res.statusCode
      encoding = res.headers['content-encoding']
      let read = 0
      let complete = true
      // Leaving the loop early (enough read) destroys the body, which closes the connection;
      // an answer read to its end leaves it for the next delivery.
      for await (const chunk of res.body) {
        chunks.push(chunk as Buffer)
        read += (chunk as Buffer).length
        if (read >= MAX_READ_BYTES) {
          complete = false
          break
        }
      }
      // undici frees the connection a tick after the body's end: a delivery started right away
      // (the worker fills the slot at once) would open a second connection instead of reusing it.
      await setImmediate()
      return { result: await fromResponse(complete) }
    } catch (err) {
      // Headers in time decide the outcome; a body still trickling in (or cut off) is kept as read.
      if (status !== null) return { result: await fromResponse(false) }
      const e = err as Error & { code?: string }
      if (abort.signal.aborted || e.code === 'UND_ERR_CONNECT_TIMEOUT')
        return {
          result: {
            outcome: 'timeout',
            responseCode: null,
            responseBody: `timeout after ${formatSeconds(this.opts.timeoutMs)}`,
          },
        }
      if (e.code === 'EBLOCKED')
        return { result: { outcome: 'blocked', responseCode: null, responseBody: `blocked: ${e.message}` } }
      return {
        result: {
          outcome: 'failure',
          responseCode: null,
          responseBody: `connection error: ${e.code ?? e.message}`.slice(0, WEBHOOK_RESPONSE_BODY_MAX),
        },
        staleSocket:
          CLOSED_SOCKET_CODES.has(e.code ?? '') && (this.connects.get(origin) ?? 0) === connectsBefore,
      }
    } finally {
      clearTimeout(timer)
    }
  }

  /** The kept bytes of an answer with a `Content-Encoding` (see `answerBytes`), in turn. */
  private decode(encoding: string | string[], chunks: Buffer[], complete: boolean): Promise<Buffer> {
    const run = this.decoding.then(async () => {
      const kept = await answerBytes(encoding, Buffer.concat(chunks), complete, MAX_DECODED_BYTES)
      return typeof kept === 'string' ? Buffer.from(kept) : kept
    })
    this.decoding = run.catch(() => undefined)
    return run
  }

  close(): Promise<void> {
    return this.agent.destroy()
  }
}
