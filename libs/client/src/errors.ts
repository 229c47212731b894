/** Error types by HTTP status (the API's type always follows its status). */
const TYPE_BY_STATUS: Record<number, string> = {
  400: 'validation_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found',
  405: 'validation_error',
  408: 'validation_error',
  409: 'conflict',
  413: 'validation_error',
  417: 'validation_error',
  431: 'validation_error',
  422: 'unprocessable',
  429: 'rate_limit_error',
  500: 'internal_error',
  503: 'internal_error',
}

/** HTTP status by error type, for errors that arrive without one (RPC replies). */
const STATUS_BY_TYPE: Record<string, number> = {
  validation_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found: 404,
  conflict: 409,
  unprocessable: 422,
  rate_limit_error: 429,
  internal_error: 500,
}

export const errorTypeForStatus = (status: number): string =>
  TYPE_BY_STATUS[status] ?? (status >= 500 ? 'internal_error' : 'validation_error')

export const statusForErrorType = (type: string): number => STATUS_BY_TYPE[type] ?? 500

export interface MailerErrorFields {
  type: string
  code: string
  message: string
  param?: string | undefined
  status: number
  requestId?: string | undefined
  /** Seconds from the `Retry-After` header (HTTP only). */
  retryAfter?: number | undefined
}

/**
 * An error answered by the Mailer API (HTTP) or by an RPC call: the contract's
 * `{ type, code, message, param }` plus the HTTP status and, over HTTP, the request id to quote
 * when asking the operator about it.
 */
export class MailerApiError extends Error {
  readonly type: string
  readonly code: string
  readonly param: string | undefined
  readonly status: number
  readonly requestId: string | undefined
  readonly retryAfter: number | undefined

  constructor(fields: MailerErrorFields) {
    super(fields.message)
    this.name = 'MailerApiError'
    this.type = fields.type
    this.code = fields.code
    this.param = fields.param
    this.status = fields.status
    this.requestId = fields.requestId
    this.retryAfter = fields.retryAfter
  }

  toJSON(): Omit<MailerErrorFields, 'retryAfter'> {
    const out: Omit<MailerErrorFields, 'retryAfter'> = {
      type: this.type,
      code: this.code,
      message: this.message,
      status: this.status,
    }
    if (this.param !== undefined) out.param = this.param
    if (this.requestId !== undefined) out.requestId = this.requestId
    return out
  }
}

/**
 * The API could not be reached or did not answer in time (no HTTP response at all). Nothing is
 * known about whether the request took effect; a send with an idempotency key can be repeated.
 */
export class MailerConnectionError extends Error {
  readonly url: string
  readonly timedOut: boolean

  constructor(message: string, opts: { url: string; timedOut?: boolean; cause?: unknown }) {
    super(message, { cause: opts.cause })
    this.name = 'MailerConnectionError'
    this.url = opts.url
    this.timedOut = opts.timedOut ?? false
  }
}

export const isMailerApiError = (e: unknown): e is MailerApiError => e instanceof MailerApiError
