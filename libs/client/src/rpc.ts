import { MailerApiError, statusForErrorType } from './errors.js'
import { timeoutOf } from './options.js'
import { headerCarries } from './transport.js'
import type { Page } from './types/common.js'
import type {
  BatchResponse,
  CanceledEmail,
  Email,
  EmailSummary,
  ListEmailsQuery,
  SendEmailInput,
  SendResult,
} from './types/emails.js'

/**
 * The part of a NATS connection the RPC clients use: `nats` 2.x `NatsConnection` and
 * `@nats-io/transport-node` 3.x both fit, so the client does not depend on either.
 */
export interface NatsRequester {
  request(
    subject: string,
    payload?: Uint8Array,
    opts?: { timeout?: number; headers?: NatsHeaders },
  ): Promise<{ data: Uint8Array }>
  /** The server's INFO once connected: its `max_payload` bounds every request. */
  readonly info?: { max_payload?: number } | undefined
}

/** What `headers()` of `nats` (or `@nats-io/transport-node`) makes: NATS message headers. */
export interface NatsHeaders {
  set(key: string, value: string): void
}

export interface RpcOptions {
  /** The deployment's `NATS_PREFIX`, when it has one: subjects become `<prefix>.rpc...`. */
  prefix?: string
  /**
   * How long to wait for a reply, in milliseconds (1 to 2³¹ − 1, else a TypeError); then the
   * NATS timeout error is thrown as it is. Default 10 s.
   */
  timeoutMs?: number
  /**
   * `headers` from `nats` (or `@nats-io/transport-node`). With it every call sends an
   * `X-Request-Id` header (the call's `requestId`, else a fresh `req_…`), which the services
   * log and quote in a 500 `internal`, and an error thrown for the call carries it as
   * `requestId`. Without it no header is sent (the client does not depend on a NATS library).
   */
  headers?: () => NatsHeaders
}

/** Per call. */
export interface RpcCallOptions {
  /** Your own request id, sent as `X-Request-Id` (needs `RpcOptions.headers`). */
  requestId?: string
}

export const SERVICE_ERROR_PREFIX = 'SERVICE_ERROR:'

const enc = new TextEncoder()
const dec = new TextDecoder()

/**
 * The request ids the services keep (else they make their own), as USABLE_REQUEST_ID of
 * @mailer/contracts (which this package does not depend on) has them: what a header carries as
 * given, 1-200 characters.
 */
const served = (id: string): boolean => id.length >= 1 && id.length <= 200 && headerCarries(id)

/** `auth.projects.create`, a prefix: dot-separated tokens a NATS subject can carry (no space, no wildcard). */
const OPERATION = /^[^\s.*>]+(?:\.[^\s.*>]+)*$/

/**
 * Finds `SERVICE_ERROR:<json>` in a reply or an error message and rebuilds the error, with its
 * status from the JSON or else from its type (403 for `permission_error`, ...). Null when the
 * text holds no such error or its JSON cannot be read.
 */
export function decodeServiceError(text: string): MailerApiError | null {
  const at = text.indexOf(SERVICE_ERROR_PREFIX)
  if (at < 0) return null
  let obj: Record<string, unknown>
  try {
    obj = JSON.parse(text.slice(at + SERVICE_ERROR_PREFIX.length)) as Record<string, unknown>
  } catch {
    return null
  }
  if (!obj || typeof obj !== 'object' || typeof obj.code !== 'string') return null
  const type = typeof obj.type === 'string' ? obj.type : 'internal_error'
  return new MailerApiError({
    type,
    code: obj.code,
    message: typeof obj.message === 'string' ? obj.message : obj.code,
    param: typeof obj.param === 'string' ? obj.param : undefined,
    status: typeof obj.status === 'number' ? obj.status : statusForErrorType(type),
  })
}

/** A reply's result, or the MailerApiError it carries. */
export function decodeRpcReply(data: Uint8Array): unknown {
  const text = dec.decode(data)
  if (text.startsWith(SERVICE_ERROR_PREFIX)) {
    const err = decodeServiceError(text)
    if (err) throw err
    throw new Error(text)
  }
  return text === '' ? undefined : JSON.parse(text)
}

/**
 * A MailerApiError decoded from a reply does not say which call it answered: the reply has
 * nothing but the error JSON. The request id the client sent does, as on REST.
 */
function tagged(err: unknown, requestId: string | undefined): unknown {
  if (requestId === undefined || !(err instanceof MailerApiError)) return err
  return new MailerApiError({ ...err.toJSON(), requestId })
}

async function request(
  nc: NatsRequester,
  subject: string,
  payload: unknown,
  opts: RpcOptions & { timeout: number },
  call: RpcCallOptions = {},
): Promise<unknown> {
  let requestId: string | undefined
  let headers: NatsHeaders | undefined
  if (opts.headers) {
    // The reply carries no id: one the services would replace with their own (they keep what
    // `served` allows, as the gateway does) would be put on the error though nothing was logged
    // under it, and NATS refuses a line break in a header with an error of its own.
    if (call.requestId !== undefined && !served(call.requestId))
      throw new TypeError(
        'requestId is not an id the service keeps: 1-200 printable ASCII characters, no space at either end (it is not shown)',
      )
    requestId = call.requestId ?? `req_${crypto.randomUUID().replaceAll('-', '')}`
    headers = opts.headers()
    headers.set('X-Request-Id', requestId)
  }
  const data = enc.encode(JSON.stringify(payload))
  // A request over the server's max_payload can never be sent as it is: the caller gets the
  // 413 a REST client gets for an oversized body (the gateway's bus answers the same), not the
  // NATS library's own error, which differs between the transports this client takes.
  const maxPayload = nc.info?.max_payload
  if (maxPayload !== undefined && data.length > maxPayload) throw tagged(tooLarge(maxPayload), requestId)
  let reply: { data: Uint8Array }
  try {
    reply = await nc.request(subject, data, {
      timeout: opts.timeout,
      ...(headers ? { headers } : {}),
    })
  } catch (err) {
    // A transport that throws service errors (rather than replying with them) still decodes;
    // anything else (timeout, no responders) reaches the caller unchanged.
    const decoded = err instanceof Error ? decodeServiceError(err.message) : null
    // nats.js 2.x counts the headers too, so a request just under the limit can still pass it.
    const over = (err as { code?: unknown } | null)?.code === 'MAX_PAYLOAD_EXCEEDED'
    throw tagged(decoded ?? (over ? tooLarge(maxPayload) : err), requestId)
  }
  try {
    return decodeRpcReply(reply.data)
  } catch (err) {
    throw tagged(err, requestId)
  }
}

const tooLarge = (maxPayload: number | undefined): MailerApiError =>
  new MailerApiError({
    type: 'validation_error',
    code: 'payload_too_large',
    message: `The request is larger than this deployment's message limit (NATS max_payload${maxPayload === undefined ? '' : `, ${maxPayload} bytes`})`,
    status: 413,
  })

const subjectOf = (prefix: string | undefined, name: string) => (prefix ? `${prefix}.${name}` : name)

function checkConnection(nc: unknown, prefix: unknown): asserts nc is NatsRequester {
  if (!nc || typeof (nc as NatsRequester).request !== 'function')
    throw new TypeError('a NATS connection is required')
  // A space or wildcard in it would break every subject, and with it the shared connection.
  if (prefix !== undefined && prefix !== '' && (typeof prefix !== 'string' || !OPERATION.test(prefix)))
    throw new TypeError(
      `not a NATS_PREFIX: ${JSON.stringify(prefix)} (dot-separated names, no space or wildcard)`,
    )
}

/**
 * `MailerRpc` over NATS: sends and reads emails of one project named by slug, without a key.
 * Every send is live. It never retries and never makes an idempotency key.
 */
export class MailerRpcClient {
  private readonly timeout: number

  constructor(
    private readonly nc: NatsRequester,
    readonly project: string,
    private readonly opts: RpcOptions = {},
  ) {
    checkConnection(nc, opts.prefix)
    if (typeof project !== 'string' || project === '') throw new TypeError('a project slug is required')
    this.timeout = timeoutOf(opts.timeoutMs, 10_000)
  }

  private call<T>(method: string, args: unknown[], call?: RpcCallOptions): Promise<T> {
    const subject = subjectOf(this.opts.prefix, `rpc.mailer.${method}`)
    const payload = { project: this.project, args }
    return request(this.nc, subject, payload, { ...this.opts, timeout: this.timeout }, call) as Promise<T>
  }

  /** `opts.idempotencyKey` is copied into `input.idempotencyKey` and wins over it. */
  send(input: SendEmailInput, opts: { idempotencyKey?: string } & RpcCallOptions = {}): Promise<SendResult> {
    const body = opts.idempotencyKey === undefined ? input : { ...input, idempotencyKey: opts.idempotencyKey }
    return this.call('send', [body], opts)
  }

  /** Up to 100 inputs: `{ data }`, one result or `{ error }` per input, in input order. */
  sendBatch(inputs: SendEmailInput[], opts?: RpcCallOptions): Promise<BatchResponse> {
    return this.call('sendBatch', [inputs], opts)
  }

  /** The email, or null when the project has none with that id. */
  get(emailId: string, opts?: RpcCallOptions): Promise<Email | null> {
    return this.call('get', [emailId], opts)
  }

  list(query?: ListEmailsQuery, opts?: RpcCallOptions): Promise<Page<EmailSummary>> {
    return this.call('list', query === undefined ? [] : [query], opts)
  }

  cancel(emailId: string, opts?: RpcCallOptions): Promise<CanceledEmail> {
    return this.call('cancel', [emailId], opts)
  }
}

/** What an AdminRpc operation takes (libs/contracts/src/rpc.ts `AdminRpcRequest`). */
export interface AdminRpcRequest {
  /** Required by project operations (the admin mirror's `:slug`); refused by admin operations. */
  project?: string
  params?: Record<string, string>
  query?: Record<string, string>
  body?: unknown
  /** Lower-case forwarded headers, e.g. `idempotency-key`. */
  headers?: Record<string, string>
}

/**
 * `AdminRpc` over NATS: the admin API's operations, named after the route subject without
 * `api.` (`auth.projects.create`, `email.emails.send` with `project`, ...).
 */
export class AdminRpcClient {
  private readonly timeout: number

  constructor(
    private readonly nc: NatsRequester,
    private readonly opts: RpcOptions = {},
  ) {
    checkConnection(nc, opts.prefix)
    this.timeout = timeoutOf(opts.timeoutMs, 10_000)
  }

  call<T = unknown>(operation: string, req: AdminRpcRequest = {}, opts?: RpcCallOptions): Promise<T> {
    if (!operation) throw new TypeError('an operation is required')
    // A space split the subject on the wire and the call waited out its time-out for no answer.
    if (typeof operation !== 'string' || !OPERATION.test(operation))
      throw new TypeError(
        `not an operation name: ${JSON.stringify(operation)} (dot-separated names such as auth.projects.create)`,
      )
    const subject = subjectOf(this.opts.prefix, `rpc.admin.${operation}`)
    return request(this.nc, subject, req, { ...this.opts, timeout: this.timeout }, opts) as Promise<T>
  }
}
