import { errorTypeForStatus, MailerApiError, MailerConnectionError } from './errors.js'
import { maxRetriesOf, timeoutOf } from './options.js'
import { parseRetryAfter, retryDelayMs } from './retry.js'

export type QueryValue = string | number | boolean | Date | null | undefined | readonly (string | number)[]
export type Query = Record<string, QueryValue>

export interface RetryInfo {
  method: string
  path: string
  /** 1 for the first retry. */
  retry: number
  delayMs: number
  error: MailerApiError
}

export interface TransportOptions {
  baseUrl: string
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string | undefined
  /** Retries after `rate_limited` (and `service_unavailable` on idempotent calls). Default 2. */
  maxRetries?: number
  /** Per attempt; a request that takes longer fails with MailerConnectionError. Default 30 s. */
  timeoutMs?: number
  /** Extra headers on every request. */
  headers?: Record<string, string>
  /** Defaults to the global fetch (Node 18+, browsers, Deno, Bun, workers). */
  fetch?: typeof fetch
  /** Called before each wait; may return a promise, which is awaited. */
  onRetry?: (info: RetryInfo) => void | Promise<void>
  /** How waits are made; replace it to run waits on your own scheduler. An abort of the call's signal ends a wait at once. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>
}

export interface RequestOptions {
  /**
   * Your own `X-Request-Id` (echoed back and quoted in the service's logs when it is 1-200
   * printable ASCII characters). One a header cannot carry as given (beyond printable ASCII,
   * spaces at either end) is a TypeError before any request.
   */
  requestId?: string
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number
  signal?: AbortSignal
}

export interface CallInit extends RequestOptions {
  query?: Query | undefined
  body?: unknown
  /** `Idempotency-Key` (the sends); repeated unchanged on every retry. */
  idempotencyKey?: string | undefined
  /** The body carries the key (every item's, for a batch) in place of the header. */
  keyInBody?: boolean
  /** The route deduplicates by idempotency key (a send): one makes the call safe to repeat. */
  keyed?: boolean
}

/** `wait`, or the signal's reason as soon as it aborts. */
function untilAborted(wait: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return wait
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    wait.then(
      () => {
        signal.removeEventListener('abort', onAbort)
        resolve()
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(err)
      },
    )
  })
}

// Its timer goes with an abort, so that an aborted call does not keep the process up for a minute.
const defaultSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener('abort', () => clearTimeout(timer), { once: true })
  })

function appendQuery(url: URL, query: Query | undefined): void {
  if (!query) return
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue
    if (Array.isArray(value)) for (const v of value) url.searchParams.append(key, String(v))
    else url.searchParams.set(key, value instanceof Date ? value.toISOString() : String(value))
  }
}

/**
 * Whether a header carries `s` to the service exactly as given: printable ASCII with no space at
 * either end. fetch drops spaces and tabs around a value (` order-42` arrives as another key),
 * refuses a line break and anything beyond U+00FF, and the gateway reads the bytes as Latin-1, so
 * `订单-42` sent as UTF-8 would arrive as other characters. The empty string passes: the service
 * answers it (1-256 characters) as it always did.
 */
export const headerCarries = (s: string): boolean => /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/.test(s)

/**
 * `value` of `option` as a header, or a TypeError before any request: fetch's own refusal would
 * reject the fetch and read as a connection failure, though nothing was sent. The value is not
 * quoted (a request id or key may be a secret, or a secret pasted by mistake).
 */
function headerOption(option: string, value: string, hint: string): string {
  if (headerCarries(value)) return value
  throw new TypeError(
    `${option} cannot go in an HTTP header as given: it must be printable ASCII with no space at either end (${hint})`,
  )
}

/**
 * A header value as fetch can send it: fetch takes characters up to U+00FF only, one byte each,
 * so a key beyond ASCII (the admin key is the operator's choice) goes as its UTF-8 bytes, as curl
 * sends it and as the gateway reads it.
 */
const headerBytes = (s: string): string =>
  /^[\x20-\x7e]*$/.test(s) ? s : String.fromCharCode(...new TextEncoder().encode(s))

/**
 * `s` without the characters `drop` accepts at its end (and at its start unless `start` is false).
 * Index scans, linear in the length: a `[…]+$` pattern retries from every character of a run
 * that is not at the end, quadratic in the run's length (a pasted value with a long inner run of
 * spaces or slashes held the caller's thread for minutes).
 */
function trimEnds(s: string, drop: (c: string) => boolean, start = true): string {
  let end = s.length
  while (end > 0 && drop(s[end - 1]!)) end--
  let from = 0
  if (start) while (from < end && drop(s[from]!)) from++
  return s.slice(from, end)
}

/**
 * The key as it can go in `Authorization`. fetch drops whitespace around a header value (a key
 * read from a file with its newline still works), so that is dropped here too; a control
 * character inside it (a line break in a pasted key) makes fetch refuse the header with an error
 * that quotes the whole header, key included, so it is refused here first, without quoting it.
 */
function headerSafeToken(token: string): string {
  const t = trimEnds(token, (c) => c === ' ' || c === '\t' || c === '\n' || c === '\r')
  if (/(?!\t)\p{Cc}/u.test(t))
    throw new TypeError(
      'the key holds a line break or another control character, which no HTTP header can carry (the key is not shown)',
    )
  return t
}

/** fetch-based HTTP: JSON in and out, the contract's errors as MailerApiError, retries. */
export class HttpTransport {
  readonly baseUrl: string
  // A true private field: printing a client never shows its key.
  readonly #opts: TransportOptions
  private readonly fetchFn: typeof fetch
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>
  private readonly timeoutMs: number
  private readonly maxRetries: number

  constructor(opts: TransportOptions) {
    if (!opts.baseUrl) throw new TypeError('baseUrl is required (for example http://localhost:3000)')
    this.baseUrl = trimEnds(opts.baseUrl, (c) => c === '/', false)
    // fetch cannot send URL credentials, and its error would quote them: refused here, unquoted.
    let u: URL | undefined
    try {
      u = new URL(this.baseUrl)
    } catch {
      // Not a URL: left to fail on the first request, as before.
    }
    if (u?.username || u?.password)
      throw new TypeError(
        'baseUrl must not hold a user name or password (not shown): pass the key as apiKey or adminKey',
      )
    this.#opts = opts.token === undefined ? opts : { ...opts, token: headerSafeToken(opts.token) }
    // Refused here, naming the header but not its value: at fetch time it read as a connection failure.
    for (const [name, value] of Object.entries(opts.headers ?? {})) {
      try {
        new Headers([[name, value]])
      } catch {
        throw new TypeError(`headers: '${name}' cannot be sent as an HTTP header (its value is not shown)`)
      }
    }
    const f = opts.fetch ?? globalThis.fetch
    if (typeof f !== 'function') throw new TypeError('no fetch available: pass options.fetch')
    this.fetchFn = f
    this.sleep = opts.sleep ?? defaultSleep
    this.timeoutMs = timeoutOf(opts.timeoutMs, 30_000)
    this.maxRetries = maxRetriesOf(opts.maxRetries, 2)
  }

  async request<T>(method: string, path: string, init: CallInit = {}): Promise<T> {
    const maxRetries = maxRetriesOf(init.maxRetries, this.maxRetries)
    const bodyKey = (init.body as { idempotencyKey?: unknown } | undefined)?.idempotencyKey
    // A key makes a write safe to repeat only where the route reads it: any other write may
    // have been applied before a 503, and a repeat would apply it again.
    const idempotent =
      method === 'GET' ||
      (init.keyed === true &&
        (init.idempotencyKey !== undefined || init.keyInBody === true || typeof bodyKey === 'string'))
    for (let retriesDone = 0; ; retriesDone++) {
      try {
        return await this.once<T>(method, path, init)
      } catch (err) {
        if (!(err instanceof MailerApiError)) throw err
        const delayMs = retryDelayMs(err, { retriesDone, maxRetries, idempotent })
        if (delayMs === null) throw err
        await this.#opts.onRetry?.({ method, path, retry: retriesDone + 1, delayMs, error: err })
        // The wait can be up to a minute: an abort ends it at once, not after it.
        await untilAborted(this.sleep(delayMs, init.signal), init.signal)
      }
    }
  }

  private async once<T>(method: string, path: string, init: CallInit): Promise<T> {
    const url = new URL(this.baseUrl + path)
    appendQuery(url, init.query)
    const headers: Record<string, string> = { accept: 'application/json', ...this.#opts.headers }
    if (this.#opts.token) headers.authorization = `Bearer ${headerBytes(this.#opts.token)}`
    if (init.idempotencyKey !== undefined)
      headers['idempotency-key'] = headerOption(
        'idempotencyKey',
        init.idempotencyKey,
        'a send carries any other key in its body',
      )
    if (init.requestId !== undefined)
      headers['x-request-id'] = headerOption(
        'requestId',
        init.requestId,
        'the service keeps 1-200 printable ASCII characters',
      )
    let body: string | undefined
    if (init.body !== undefined) {
      body = JSON.stringify(init.body)
      headers['content-type'] = 'application/json'
    }
    const timeout = AbortSignal.timeout(this.timeoutMs)
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout

    let res: Response
    let text: string
    try {
      // Redirects are answered, never followed: fetch repeats a POST redirected by a proxy as a
      // GET (a send came back as the list of emails, nothing sent) and drops the key on the way
      // to another origin (http → https: a 401 for a key that was given).
      res = await this.fetchFn(url, { method, headers, body: body ?? null, signal, redirect: 'manual' })
      text = await res.text()
    } catch (err) {
      if (init.signal?.aborted) throw err
      const timedOut = timeout.aborted
      const why = timedOut ? `no answer within ${this.timeoutMs} ms` : describeCause(err)
      throw new MailerConnectionError(`Could not reach ${this.baseUrl}: ${why}`, {
        url: url.toString(),
        timedOut,
        cause: err,
      })
    }

    const requestId = res.headers.get('x-request-id') ?? undefined
    let parsed: unknown
    let parseFailed = false
    try {
      parsed = text === '' ? undefined : JSON.parse(text)
    } catch {
      parseFailed = true
    }
    if (res.ok && !parseFailed) return parsed as T

    // A browser hides a redirect's status and Location (an opaque response, status 0).
    if (res.type === 'opaqueredirect' || (res.status >= 300 && res.status < 400)) {
      const to = res.headers.get('location') ?? 'an address the answer does not show'
      throw new MailerApiError({
        type: 'internal_error',
        code: 'unexpected_response',
        message: `${method} ${path} was redirected (${res.status}) to ${to}: set baseUrl to the address the API answers at; redirects are not followed`,
        status: res.status,
        requestId,
      })
    }
    const e = (parsed as { error?: Record<string, unknown> } | undefined)?.error
    if (!res.ok && e && typeof e.code === 'string') {
      throw new MailerApiError({
        type: typeof e.type === 'string' ? e.type : errorTypeForStatus(res.status),
        code: e.code,
        message: typeof e.message === 'string' ? e.message : e.code,
        param: typeof e.param === 'string' ? e.param : undefined,
        status: res.status,
        requestId,
        retryAfter: parseRetryAfter(res.headers.get('retry-after')),
      })
    }
    // Not the contract's shape: a proxy page, a truncated body. Keep what helps to diagnose it.
    throw new MailerApiError({
      type: res.ok ? 'internal_error' : errorTypeForStatus(res.status),
      code: 'unexpected_response',
      message: `Unexpected ${res.status} answer from ${method} ${path}: ${text.slice(0, 200) || '(empty body)'}`,
      status: res.status,
      requestId,
      retryAfter: parseRetryAfter(res.headers.get('retry-after')),
    })
  }
}

function describeCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err))
}
