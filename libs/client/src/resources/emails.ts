import { paginate, type Scope } from '../scope.js'
import { headerCarries, type RequestOptions } from '../transport.js'
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
   * set the client makes one (`sdk_<uuid>`), so that its own retries never send twice. A key a
   * header cannot carry as given (beyond printable ASCII, spaces at either end) goes in the body.
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

/** An item's key, as the body field caps it (contract.md part 3). */
const KEY_MAX = 256

/**
 * A batch item with the key the service would give it from an `Idempotency-Key` header
 * (`<key>:<index>`, contract.md part 3), for a batch key no header can carry. An item with a key
 * of its own keeps it; one that is not an object is left as it is (the service refuses it).
 */
function withDerivedKey(item: SendEmailInput, key: string, index: number): SendEmailInput {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return item
  if (item.idempotencyKey !== undefined) return item
  const derived = `${key}:${index}`
  // The header's derived keys are not held to 256, a body's key is: the service would refuse this
  // item, where it takes it from a header. Nothing is sent rather than a batch the service answers
  // differently.
  if (derived.length > KEY_MAX)
    throw new TypeError(
      `idempotencyKey is too long for a batch: a key no HTTP header carries as given (beyond printable ASCII, or with spaces at either end) goes into each item as <key>:<index>, which must stay within ${KEY_MAX} characters`,
    )
  return { ...item, idempotencyKey: derived }
}

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
    const { dryRun, idempotencyKey: given, ...rest } = opts
    const query = dryRun === undefined ? undefined : { dryRun }
    // A key no header carries as given goes in the body's field, which the header would have
    // overridden: the service sees the caller's key exactly, and nothing else changes (the
    // idempotency fingerprint leaves the key out).
    if (given !== undefined && !headerCarries(given))
      return this.s.call('emails.send', undefined, {
        ...rest,
        body: { ...input, idempotencyKey: given },
        query,
      })
    // An input's own key is honoured as it is; a generated header would override it.
    const idempotencyKey =
      given ?? (input.idempotencyKey === undefined ? generateIdempotencyKey() : undefined)
    return this.s.call('emails.send', undefined, { ...rest, idempotencyKey, body: input, query })
  }

  /**
   * POST /v1/emails/batch: up to 100 inputs, one result or `{ error }` per input in input order.
   * An item without its own `idempotencyKey` gets `<key>:<index>` from the batch key.
   */
  // async: a key refused here rejects the call, as a refusal from the transport does.
  async sendBatch(inputs: SendEmailInput[], opts: BatchOptions = {}): Promise<BatchResponse> {
    const { dryRun, idempotencyKey: given, ...rest } = opts
    const query = dryRun === undefined ? undefined : { dryRun }
    const key = given ?? generateIdempotencyKey()
    if (headerCarries(key) || !Array.isArray(inputs))
      return this.s.call('emails.sendBatch', undefined, { ...rest, idempotencyKey: key, body: inputs, query })
    // No header can carry it: each item gets the key the service would have derived from one.
    const body = inputs.map((item, i) => withDerivedKey(item, key, i))
    return this.s.call('emails.sendBatch', undefined, { ...rest, keyInBody: true, body, query })
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
