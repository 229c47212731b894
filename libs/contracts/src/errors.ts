import { z } from 'zod'

/** Error types; the type always follows the HTTP status (contract.md part 0). */
export const ERROR_TYPE_BY_STATUS = {
  400: 'validation_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found',
  405: 'validation_error',
  /** 408, 417 and 431 are beyond the contract's table: Node refuses these before any route (api.md). */
  408: 'validation_error',
  409: 'conflict',
  413: 'validation_error',
  417: 'validation_error',
  422: 'unprocessable',
  429: 'rate_limit_error',
  431: 'validation_error',
  500: 'internal_error',
  503: 'internal_error',
} as const

export type ErrorStatus = keyof typeof ERROR_TYPE_BY_STATUS
export type ErrorType = (typeof ERROR_TYPE_BY_STATUS)[ErrorStatus]

/** Every error code the API can answer with, and its HTTP status. */
export const ERROR_CODES = {
  // 400
  invalid_body: 400,
  missing_body: 400,
  invalid_query: 400,
  too_many_recipients: 400,
  invalid_header: 400,
  invalid_attachment: 400,
  invalid_schedule: 400,
  invalid_template: 400,
  invalid_template_data: 400,
  /** The request line or a header is not HTTP/1.1 (refused by the HTTP parser, no route). */
  invalid_request: 400,
  // 401
  missing_api_key: 401,
  invalid_api_key: 401,
  revoked_api_key: 401,
  expired_api_key: 401,
  /** Dashboard API: no valid session cookie (missing, expired, forged or signed out). */
  invalid_session: 401,
  // 403
  project_disabled: 403,
  invalid_sender: 403,
  admin_only: 403,
  rpc_disabled: 403,
  domain_not_verified: 403,
  /** Dashboard API: a state-changing request without the CSRF token or from another origin. */
  csrf_failed: 403,
  // 404
  route_not_found: 404,
  project_not_found: 404,
  email_not_found: 404,
  webhook_not_found: 404,
  delivery_not_found: 404,
  template_not_found: 404,
  template_version_not_found: 404,
  contact_not_found: 404,
  audience_not_found: 404,
  broadcast_not_found: 404,
  api_key_not_found: 404,
  domain_not_found: 404,
  suppression_not_found: 404,
  content_expired: 404,
  // 405
  method_not_allowed: 405,
  // 408
  /** The headers, or the whole request, did not arrive within the server's time-outs. */
  request_timeout: 408,
  // 409
  idempotency_payload_mismatch: 409,
  not_cancelable: 409,
  webhook_disabled: 409,
  webhook_limit_reached: 409,
  slug_taken: 409,
  template_exists: 409,
  template_conflict: 409,
  audience_exists: 409,
  audience_in_use: 409,
  broadcast_not_draft: 409,
  broadcast_active: 409,
  // 413
  payload_too_large: 413,
  // 417
  /** An `Expect` header other than `100-continue` (refused by the HTTP server, no route). */
  expectation_failed: 417,
  // 422
  recipient_suppressed: 422,
  // 429
  rate_limited: 429,
  daily_limit_exceeded: 429,
  // 431
  /** The request line and headers together are over Node's limit (16 KiB). */
  headers_too_large: 431,
  // 500 / 503
  internal: 500,
  service_unavailable: 503,
} as const satisfies Record<string, ErrorStatus>

export type ErrorCode = keyof typeof ERROR_CODES

/** The error object as it appears in HTTP bodies and on the bus. */
export const ErrorObject = z.object({
  type: z.string(),
  code: z.string(),
  message: z.string(),
  param: z.string().optional(),
  status: z.number().int().optional(),
})
export type ErrorObject = z.infer<typeof ErrorObject>

/**
 * The one error class. Services throw it; it crosses NATS as data (`toJSON`) and is rebuilt on
 * the caller's side (`MailerError.from`); the gateway turns it into HTTP in one place.
 */
export class MailerError extends Error {
  readonly type: string
  readonly code: string
  readonly status: number
  readonly param: string | undefined

  constructor(
    code: ErrorCode | (string & {}),
    message: string,
    opts: { param?: string; status?: number } = {},
  ) {
    super(message)
    this.name = 'MailerError'
    this.code = code
    this.status = opts.status ?? (ERROR_CODES as Record<string, number>)[code] ?? 500
    this.type = (ERROR_TYPE_BY_STATUS as Record<number, string>)[this.status] ?? 'internal_error'
    this.param = opts.param
  }

  /** Safe to retry unchanged (the backing service did not answer, or a rate limit). */
  get retryable(): boolean {
    return this.code === 'service_unavailable' || this.code === 'rate_limited'
  }

  toJSON(): ErrorObject {
    const out: ErrorObject = { type: this.type, code: this.code, message: this.message, status: this.status }
    if (this.param !== undefined) out.param = this.param
    return out
  }

  static from(obj: ErrorObject): MailerError {
    const err = new MailerError(obj.code, obj.message, {
      ...(obj.param !== undefined ? { param: obj.param } : {}),
      ...(obj.status !== undefined ? { status: obj.status } : {}),
    })
    return err
  }
}

export const isMailerError = (e: unknown): e is MailerError => e instanceof MailerError

/** Shorthand used by handlers: `throw fail('email_not_found', 'No email with that id')`. */
export function fail(code: ErrorCode, message: string, param?: string): MailerError {
  return new MailerError(code, message, param === undefined ? {} : { param })
}

/** Wire prefix of a failed RPC reply (interface.md part 7, contract.md part 6). */
export const SERVICE_ERROR_PREFIX = 'SERVICE_ERROR:'
