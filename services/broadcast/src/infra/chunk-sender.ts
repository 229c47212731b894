import { type Caller, isMailerError } from '@mailer/contracts'
import type { LeaseKeeper } from '@mailer/db'
import type { Links } from '@mailer/links'
import type { Logger } from '@mailer/observability'
import { type CompiledTemplate, compileTemplate } from '@mailer/templating'
import { GroupFiller } from '../domain/batch-groups.js'
import { type ChunkEntry, type ItemResult, pausesBroadcast, settleChunk } from '../domain/chunk-outcome.js'
import { type BroadcastSendInput, personalize } from '../domain/personalize.js'
import type { CountStore } from './count-store.js'
import type { EmailClient } from './email-client.js'
import type { BroadcastMetrics } from './metrics.js'
import type { AudienceContact, ClaimedBroadcast, SenderStore } from './sender-store.js'

/** What one step of a claimed broadcast ended in; only `continue` keeps the lease. */
export type Step = 'continue' | 'sent' | 'paused' | 'waiting' | 'lost'

export interface ChunkSenderDeps {
  store: SenderStore
  /** Renews the leases of the broadcasts being sent; a write of `b` waits for a renewal in progress. */
  leases: LeaseKeeper<ClaimedBroadcast>
  /** A broadcast's counts are recounted before it is marked sent or paused. */
  counts: Pick<CountStore, 'recountNow'>
  /** BROADCAST_COUNTS_REFRESH_MS: the refresher's next recount of it after that. */
  countRefreshMs: number
  client: EmailClient
  links: Links
  metrics: BroadcastMetrics
  logger: Logger
  chunkSize: number
  leaseMs: number
  resumeMs: number
  /** MAX_MESSAGE_BYTES: a contact whose email renders larger is skipped (`render_failed`). */
  maxMessageBytes: number
}

// Compiled broadcasts, by id: their content cannot change once sent, so entries never go stale.
const TEMPLATE_CACHE_MAX = 256

/**
 * Sends one chunk of a broadcast through the email service's batch route and records progress.
 * Every write of the broadcast first takes it from the lease keeper (`settling`): fenced by the
 * lease token, it must carry the one the database has, so no renewal may move it meanwhile.
 */
export class ChunkSender {
  private readonly templates = new Map<string, CompiledTemplate>()

  constructor(private readonly d: ChunkSenderDeps) {}

  async step(b: ClaimedBroadcast): Promise<Step> {
    const { client, logger } = this.d
    const store = this.settling(b)
    const requestId = `${b.id}:${b.cursor ?? 'start'}`
    const log = logger.child({ requestId, broadcastId: b.id })
    if (!b.projectSlug) throw new Error(`broadcast ${b.id} is sending without a project slug`)

    const project = await client.resolveProject(b.projectSlug, requestId)
    if (project.disabled) {
      log.warn('project is disabled; broadcast paused')
      return (await store.pause(b, b.cursor, this.d.resumeMs)) ? 'paused' : 'lost'
    }

    // Live broadcasts take only what the email service says the broadcast share admits now.
    let size = this.d.chunkSize
    if (b.mode === 'live') {
      const allowance = await client.allowance(project, requestId)
      if (allowance.broadcastLeft === 0) {
        // A limit reached pauses it until the next run (interface.md part 3); only the share
        // kept for transactional email being used makes it wait a moment and ask again.
        if (allowance.dayLeft === 0 || allowance.rateLeft === 0) {
          const limit = allowance.dayLeft === 0 ? 'daily' : 'rate'
          log.info({ limit }, 'send limit reached; broadcast paused')
          return (await store.pause(b, b.cursor, this.d.resumeMs)) ? 'paused' : 'lost'
        }
        return (await store.release(b, allowance.retryAfterMs)) ? 'waiting' : 'lost'
      }
      size = Math.min(size, allowance.broadcastLeft)
    }

    // One contact past the chunk: whether it ends the audience is known now, rather than after
    // the next allowance (a chunk that used the share up to the last contact waited for the
    // window to move on before the broadcast was marked sent).
    const fetched = await store.nextContacts(b, size + 1)
    if (fetched.length === 0) return this.finish(b, b.cursor, true)
    const contacts = fetched.length > size ? fetched.slice(0, size) : fetched

    const end = this.d.metrics.chunkSeconds.startTimer()
    const caller = client.callerFor(b, project, requestId)
    const { entries, results } = await this.renderAndSend(b, contacts, caller, log)
    const settled = settleChunk(b.cursor, entries, results)
    for (const [outcome, n] of Object.entries(settled.tally)) this.d.metrics.emails.inc({ outcome }, n)

    if (settled.pause) {
      const limited = settled.pause === 'rate_limited' || settled.pause === 'daily_limit_exceeded'
      end({ outcome: limited ? 'limited' : 'sender_refused' })
      if (limited)
        log.info({ limit: settled.pause, cursor: settled.cursor }, 'send limit hit; broadcast paused')
      else log.warn({ code: settled.pause, cursor: settled.cursor }, 'sender refused; broadcast paused')
      return (await store.pause(b, settled.cursor, this.d.resumeMs)) ? 'paused' : 'lost'
    }
    end({ outcome: 'ok' })
    // No contact after the chunk: that was the end of the audience.
    return this.finish(b, settled.cursor, fetched.length <= size)
  }

  /**
   * Renders the chunk's contacts one at a time and hands them over in groups that each fit one
   * batch request, a group as soon as the next email does not fit in it. So at most one group
   * (under NATS's max_payload less the envelope) and the email that closed it are held at once,
   * each email at most MAX_MESSAGE_BYTES of content (a larger one is skipped as `render_failed`,
   * as the email service would refuse it), rather than the whole chunk: a 3 MB newsletter rendered
   * for 100 contacts was about 1 GB of heap, and the pod that died of it claimed the same
   * broadcast again at restart. Each group's send yields the event loop. An answer that pauses
   * the broadcast (a limit, a refused sender) ends the chunk there: the contacts after it are
   * tried again when it resumes anyway.
   */
  private async renderAndSend(
    b: ClaimedBroadcast,
    contacts: AudienceContact[],
    caller: Caller,
    log: Logger,
  ): Promise<{ entries: ChunkEntry[]; results: ItemResult[] }> {
    const template = this.compiled(b)
    const entries: ChunkEntry[] = []
    const results: ItemResult[] = []
    const groups = new GroupFiller<BroadcastSendInput>(this.d.client.groupBytes)
    let items = 0
    /** Sends a group; true when its answers pause the broadcast. */
    const send = async (group: BroadcastSendInput[]): Promise<boolean> => {
      if (group.length === 0) return false
      const answers = await this.d.client.sendGroup(caller, group)
      results.push(...answers)
      return answers.some(pausesBroadcast)
    }
    for (const c of contacts) {
      if (c.unsubscribed) {
        entries.push({ contactId: c.id, skipped: 'unsubscribed' })
        continue
      }
      let item: BroadcastSendInput
      try {
        const url = this.d.links.unsubscribeUrl(b.projectId, c.id)
        item = personalize(b, template, c, url, this.d.maxMessageBytes)
      } catch (err) {
        if (!isMailerError(err)) throw err
        log.warn(
          { contactId: c.id, code: err.code, err: err.message },
          'contact skipped: its email does not render',
        )
        entries.push({ contactId: c.id, skipped: 'render_failed' })
        continue
      }
      entries.push({ contactId: c.id, item: items++ })
      const full = groups.add(item)
      // The email just added has no answer then; settleChunk passes over it after the pause.
      if (full && (await send(full))) return { entries, results }
    }
    await send(groups.take())
    return { entries, results }
  }

  /** The store's writes of `b`, each once `b` is out of the lease keeper. */
  private settling(b: ClaimedBroadcast): Pick<SenderStore, 'pause' | 'release' | 'nextContacts'> {
    const { store, leases } = this.d
    return {
      pause: async (...args) => {
        await this.recount(b)
        await leases.release(b)
        return store.pause(...args)
      },
      release: async (...args) => {
        await leases.release(b)
        return store.release(...args)
      },
      nextContacts: (...args) => store.nextContacts(...args),
    }
  }

  private async finish(b: ClaimedBroadcast, cursor: string | null, complete: boolean): Promise<Step> {
    if (complete) await this.recount(b)
    await this.d.leases.release(b)
    // Sent before the write: the lease it renews began no earlier.
    const at = performance.now()
    if (!(await this.d.store.advance(b, cursor, this.d.leaseMs, complete))) return 'lost'
    b.cursor = cursor
    if (!complete) {
      this.d.leases.hold(b, at)
      return 'continue'
    }
    this.templates.delete(b.id)
    this.d.logger.info({ broadcastId: b.id }, 'broadcast sent')
    return 'sent'
  }

  /**
   * Recounts a broadcast about to be marked sent or paused, while its lease is still renewed: no
   * email of it is created until it resumes, so a reader that sees it `sent` or `paused` sees all
   * of them in `counts` rather than the refresher's last count (BROADCAST_COUNTS_REFRESH_MS old).
   * A recount that fails only leaves that to the refresher.
   */
  private async recount(b: ClaimedBroadcast): Promise<void> {
    try {
      await this.d.counts.recountNow(b.id, this.d.countRefreshMs)
    } catch (err) {
      this.d.logger.warn(
        { err, broadcastId: b.id },
        'recounting a broadcast as it stops failed; the refresher will',
      )
    }
  }

  private compiled(b: ClaimedBroadcast): CompiledTemplate {
    let t = this.templates.get(b.id)
    if (!t) {
      if (this.templates.size >= TEMPLATE_CACHE_MAX)
        this.templates.delete(this.templates.keys().next().value!)
      t = compileTemplate({ subject: b.subject, html: b.html, text: b.text }, { name: `broadcast ${b.id}` })
      this.templates.set(b.id, t)
    }
    return t
  }
}
