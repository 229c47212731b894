import type { Bus } from '@mailer/bus'
import {
  BatchResponse,
  type Caller,
  isMailerError,
  type ProjectRef,
  ResolveProjectResponse,
  type RouteRequest,
  type SendAllowance,
  SendAllowance as SendAllowanceSchema,
  SUBJECTS,
} from '@mailer/contracts'
import { groupsWithin } from '../domain/batch-groups.js'
import type { ItemResult } from '../domain/chunk-outcome.js'
import type { BroadcastSendInput } from '../domain/personalize.js'

/** The email service's batch route: the broadcast sends through the same accept path as the API. */
const BATCH_SUBJECT = 'api.email.emails.send-batch'
/** Room left in a NATS message for what wraps the items (caller, query, headers). */
const ENVELOPE_BYTES = 16 * 1024

/** The fields of a broadcast that decide who its emails are sent as. */
export interface SenderIdentity {
  id: string
  projectSlug: string | null
  mode: string
  apiKeyId: string | null
}

/** Calls the auth and email services make on behalf of the broadcast sender, over NATS. */
export class EmailClient {
  constructor(
    private readonly bus: Bus,
    private readonly sendTimeoutMs: number,
  ) {}

  /** The project as auth knows it now (limits may have changed since the broadcast was sent). */
  resolveProject(slug: string, requestId: string): Promise<ResolveProjectResponse> {
    return this.bus.request(
      SUBJECTS.authResolveProject,
      { slug, requestId },
      { schema: ResolveProjectResponse },
    )
  }

  allowance(project: ProjectRef, requestId: string): Promise<SendAllowance> {
    return this.bus.request(
      SUBJECTS.emailAllowance,
      { projectId: project.id, dailyLimit: project.dailyLimit, requestId },
      { schema: SendAllowanceSchema },
    )
  }

  /**
   * The caller a broadcast's emails act as: the key that sent it (a test key sends test emails),
   * or a live caller without a key (admin mirror), always with source `broadcast`.
   */
  callerFor(b: SenderIdentity, project: ProjectRef, requestId: string): Caller {
    return {
      requestId,
      via: b.apiKeyId ? 'api' : 'admin',
      project,
      apiKeyId: b.apiKeyId,
      mode: b.mode === 'test' ? 'test' : 'live',
      source: 'broadcast',
    }
  }

  /** The most JSON a group of items may take to fit one batch request (NATS's max_payload less the envelope). */
  get groupBytes(): number {
    return this.bus.maxPayload - ENVELOPE_BYTES
  }

  /**
   * Emails already rendered (the send check's one); one result or error per item, in order. They
   * go over as as few batch requests as NATS's max_payload allows; the chunk sender fills its
   * groups itself as it renders (GroupFiller, `groupBytes`) and sends each with `sendGroup`.
   */
  async sendBatch(
    caller: Caller,
    items: BroadcastSendInput[],
    opts: { dryRun?: boolean } = {},
  ): Promise<ItemResult[]> {
    const out: ItemResult[] = []
    for (const group of groupsWithin(items, this.groupBytes)) {
      out.push(...(await this.sendGroup(caller, group, opts)))
    }
    return out
  }

  /**
   * One batch request of items that fit it (`groupBytes`); one result or error per item, in order.
   * An email too large for any message is that item's 400 `payload_too_large`.
   */
  async sendGroup(
    caller: Caller,
    items: BroadcastSendInput[],
    opts: { dryRun?: boolean } = {},
  ): Promise<ItemResult[]> {
    const message: RouteRequest = {
      caller,
      params: {},
      query: opts.dryRun ? { dryRun: 'true' } : {},
      body: items,
      headers: {},
    }
    try {
      const res = await this.bus.request(BATCH_SUBJECT, message, {
        timeoutMs: this.sendTimeoutMs,
        schema: BatchResponse,
      })
      return res.data as ItemResult[]
    } catch (err) {
      if (items.length === 1 && isMailerError(err) && err.code === 'payload_too_large') {
        return [{ error: { code: err.code, message: err.message } }]
      }
      throw err
    }
  }
}
