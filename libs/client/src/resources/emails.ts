import { paginate, type Scope } from '../scope.js'
import type { RequestOptions } from '../transport.js'
import type { Page } from '../types/common.js'
import type {
  BatchResponse,
  CanceledEmail,
  DryRunResult,
  Email,
  EmailContent,
  EmailSummary,
  ListEmailsQuery,
  SendEmailInput,
  SendResult,
} from '../types/emails.js'

export interface SendOptions extends RequestOptions {
  /**
   * Sent as the `Idempotency-Key` header (it wins over `input.idempotencyKey`). When neither is
   * set the client makes one (`sdk_<uuid>`), so that its own retries never send twice.
   */
  idempotencyKey?: string
}

export interface BatchOptions extends SendOptions {
  /** Validate every item without storing or sending anything. */
  dryRun?: boolean
}

/** A send with `dryRun: true` runs every check and stores, counts and sends nothing. */
export interface DryRunSendOptions extends SendOptions {
  dryRun?: boolean
}

/** `sdk_<uuid>`: the key the client makes for a send that has none. */
export const generateIdempotencyKey = (): string => `sdk_${globalThis.crypto.randomUUID()}`

const id = (emailId: string) => ({ id: emailId })

export class Emails {
  constructor(private readonly s: Scope) {}

  /**
   * POST /v1/emails. Live key: `queued` or `scheduled`; test key: `test`. With `dryRun: true`
   * nothing is stored or sent: `{ id: null, status }` when it would be accepted (a repeat of an
   * idempotency key still answers that email), the same error a real send would get otherwise.
   */
  send(input: SendEmailInput, opts?: SendOptions & { dryRun?: false }): Promise<SendResult>
  send(input: SendEmailInput, opts: DryRunSendOptions): Promise<SendResult | DryRunResult>
  send(
    input: SendEmailInput,
    opts: SendOptions & { dryRun?: boolean } = {},
  ): Promise<SendResult | DryRunResult> {
    const { dryRun, ...rest } = opts
    // An input's own key is honoured as it is; a generated header would override it.
    const idempotencyKey =
      rest.idempotencyKey ?? (input.idempotencyKey === undefined ? generateIdempotencyKey() : undefined)
    return this.s.call('emails.send', undefined, {
      ...rest,
      idempotencyKey,
      body: input,
      query: dryRun === undefined ? undefined : { dryRun },
    })
  }

  /**
   * POST /v1/emails/batch: up to 100 inputs, one result or `{ error }` per input in input order.
   * An item without its own `idempotencyKey` gets `<key>:<index>` from the batch key.
   */
  sendBatch(inputs: SendEmailInput[], opts: BatchOptions = {}): Promise<BatchResponse> {
    const { dryRun, ...rest } = opts
    const idempotencyKey = opts.idempotencyKey ?? generateIdempotencyKey()
    return this.s.call('emails.sendBatch', undefined, {
      ...rest,
      idempotencyKey,
      body: inputs,
      query: dryRun === undefined ? undefined : { dryRun },
    })
  }

  /** GET /v1/emails, newest first. */
  list(query: ListEmailsQuery = {}, opts?: RequestOptions): Promise<Page<EmailSummary>> {
    return this.s.call('emails.list', undefined, { ...opts, query: { ...query } })
  }

  /** Every email matching `query`, fetching pages as it goes; `opts.signal` stops it. */
  iterate(query: ListEmailsQuery = {}, opts?: RequestOptions): AsyncGenerator<EmailSummary> {
    return paginate((q, o) => this.list(q, o), query, opts)
  }

  get(emailId: string, opts?: RequestOptions): Promise<Email> {
    return this.s.call('emails.get', id(emailId), opts)
  }

  /** The stored html, text, headers and attachment list; 404 `content_expired` after retention. */
  content(emailId: string, opts?: RequestOptions): Promise<EmailContent> {
    return this.s.call('emails.content', id(emailId), opts)
  }

  /** Cancels a scheduled or queued email: `{ id, status: 'canceled' }`, else 409 `not_cancelable`. */
  cancel(emailId: string, opts?: RequestOptions): Promise<CanceledEmail> {
    return this.s.call('emails.cancel', id(emailId), opts)
  }

  /** Moves a scheduled email to another time (ISO 8601 with offset, or a Date). */
  reschedule(emailId: string, scheduledAt: string | Date, opts?: RequestOptions): Promise<Email> {
    const at = scheduledAt instanceof Date ? scheduledAt.toISOString() : scheduledAt
    return this.s.call('emails.reschedule', id(emailId), { ...opts, body: { scheduledAt: at } })
  }
}
