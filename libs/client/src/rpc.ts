import { MailerApiError, statusForErrorType } from './errors.js'
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
  request(subject: string, payload?: Uint8Array, opts?: { timeout?: number }): Promise<{ data: Uint8Array }>
}

export interface RpcOptions {
  /** The deployment's `NATS_PREFIX`, when it has one: subjects become `<prefix>.rpc...`. */
  prefix?: string
  /** How long to wait for a reply; then the NATS timeout error is thrown as it is. Default 10 s. */
  timeoutMs?: number
}

export const SERVICE_ERROR_PREFIX = 'SERVICE_ERROR:'

const enc = new TextEncoder()
const dec = new TextDecoder()

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

async function request(
  nc: NatsRequester,
  subject: string,
  payload: unknown,
  timeout: number,
): Promise<unknown> {
  let reply: { data: Uint8Array }
  try {
    reply = await nc.request(subject, enc.encode(JSON.stringify(payload)), { timeout })
  } catch (err) {
    // A transport that throws service errors (rather than replying with them) still decodes;
    // anything else (timeout, no responders) reaches the caller unchanged.
    const decoded = err instanceof Error ? decodeServiceError(err.message) : null
    throw decoded ?? err
  }
  return decodeRpcReply(reply.data)
}

const subjectOf = (prefix: string | undefined, name: string) => (prefix ? `${prefix}.${name}` : name)

function checkConnection(nc: unknown): asserts nc is NatsRequester {
  if (!nc || typeof (nc as NatsRequester).request !== 'function')
    throw new TypeError('a NATS connection is required')
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
    checkConnection(nc)
    if (typeof project !== 'string' || project === '') throw new TypeError('a project slug is required')
    this.timeout = opts.timeoutMs ?? 10_000
  }

  private call<T>(method: string, args: unknown[]): Promise<T> {
    const subject = subjectOf(this.opts.prefix, `rpc.mailer.${method}`)
    return request(this.nc, subject, { project: this.project, args }, this.timeout) as Promise<T>
  }

  /** `opts.idempotencyKey` is copied into `input.idempotencyKey` and wins over it. */
  send(input: SendEmailInput, opts: { idempotencyKey?: string } = {}): Promise<SendResult> {
    const body = opts.idempotencyKey === undefined ? input : { ...input, idempotencyKey: opts.idempotencyKey }
    return this.call('send', [body])
  }

  /** Up to 100 inputs: `{ data }`, one result or `{ error }` per input, in input order. */
  sendBatch(inputs: SendEmailInput[]): Promise<BatchResponse> {
    return this.call('sendBatch', [inputs])
  }

  /** The email, or null when the project has none with that id. */
  get(emailId: string): Promise<Email | null> {
    return this.call('get', [emailId])
  }

  list(query?: ListEmailsQuery): Promise<Page<EmailSummary>> {
    return this.call('list', query === undefined ? [] : [query])
  }

  cancel(emailId: string): Promise<CanceledEmail> {
    return this.call('cancel', [emailId])
  }
}

/** What an AdminRpc operation takes (libs/contracts/src/rpc.ts `AdminRpcRequest`). */
export interface AdminRpcRequest {
  /** Required by project operations (the admin mirror's `:slug`). */
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
    checkConnection(nc)
    this.timeout = opts.timeoutMs ?? 10_000
  }

  call<T = unknown>(operation: string, req: AdminRpcRequest = {}): Promise<T> {
    if (!operation) throw new TypeError('an operation is required')
    return request(
      this.nc,
      subjectOf(this.opts.prefix, `rpc.admin.${operation}`),
      req,
      this.timeout,
    ) as Promise<T>
  }
}
