import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { decodeJson, heartbeatEveryMs, type Outbox, secondsToNanos } from '@mailer/bus'
import { DispatchMessage } from '@mailer/contracts'
import { type Db, GroupCommit, type PgPool } from '@mailer/db'
import { isTerminalRecipient } from '@mailer/email-core'
import type { Logger, Metrics } from '@mailer/observability'
import type { JsMsg } from 'nats'
import type { RetryPolicy } from '../domain/backoff.js'
import type { ClaimedEmail } from '../domain/claimed-email.js'
import { dkimSign } from '../domain/dkim-sign.js'
import { buildMessage, messageIdFor, RenderError, senderAddress, senderDomain } from '../domain/message.js'
import { type Plan, planOutcome, planUnsendable } from '../domain/outcome.js'
import { Slots } from '../domain/slots.js'
import type { TrackingLinks } from '../domain/transform-html.js'
import { claimEmails, releaseClaim } from '../infra/claim.js'
import { ClaimKeeper } from '../infra/claim-keeper.js'
import type { DkimKeys } from '../infra/dkim-keys.js'
import { type AttemptRecord, type OutboxRows, recordOutcomes } from '../infra/record.js'
import { ClaimNotHeld, type Fence, type Relay, type Renderer, SendAborted } from '../infra/relay.js'

export interface DispatchDeps {
  db: Db
  /** The per-email SQL (claim, claim refresh, outcome) goes through plain pg. */
  pool: PgPool
  outbox: Outbox
  relay: Relay
  renderer: Renderer
  dkim: DkimKeys
  /** Builds the open pixel and click links for emails with tracking on. */
  links?: TrackingLinks | null
  policy: RetryPolicy
  /** Emails in flight at once, whatever the messages that name them. */
  concurrency: number
  /** JetStream ack wait; also the age at which a `sending` claim is taken over. */
  ackWaitSeconds: number
  /**
   * How long a drain lets handlers run once `stop()` is called (shutdownPlan's drainMs): outcome
   * writes that keep failing are given up by then, so a stopping dispatcher exits in time.
   */
  drainMs: number
  logger: Logger
  metrics: Metrics
}

// Waits between tries to write an attempt's outcome, the last one repeated: the relay has the
// message, and giving up leaves the claim to go stale and the email to be sent again, so the write
// is tried for as long as the claim can still be ours (record()), a database outage of any length.
const RECORD_RETRY_MS = [250, 500, 1_000, 2_000]

/**
 * Handles the messages of the EMAILS stream. Each names one or more emails; for each, in one of
 * `concurrency` slots: claim it, render and deliver it, write every outcome in one transaction,
 * then start publishing its events. The message is acked once all of them are recorded ("record
 * before ack"). Duplicate and stale messages find nothing to claim and are acked.
 */
export function makeDispatchHandler(deps: DispatchDeps): {
  handle: (msg: JsMsg) => Promise<void>
  stop: () => void
} {
  const { logger, metrics } = deps
  const deliveries = metrics.counter('deliveries_total', 'Recipient outcomes of delivery attempts', [
    'outcome',
  ])
  const deliverySeconds = metrics.histogram(
    'delivery_seconds',
    'Time the relay took to answer one delivery attempt',
    [],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  )
  // Claims are kept alive as `consume` keeps the messages: a third of the ack wait. A final dot
  // goes out only while the claim would outlive that much more with no refresh at all (two
  // thirds of the ack wait since the last one that succeeded: one may fail, not two).
  const heartbeatMs = heartbeatEveryMs(secondsToNanos(deps.ackWaitSeconds))
  const keeping = { everyMs: heartbeatMs, staleAfterMs: deps.ackWaitSeconds * 1000, fenceMs: heartbeatMs }
  // Claims and outcomes of the emails in flight are written together (group commit): one round
  // trip and one commit for many emails instead of one each (bench/README.md).
  // One write at a time unless 50 wait (GroupCommitOptions.extraSlotAt): a second concurrent claim
  // or outcome only split the group and doubled the statements (end to end +8 to +43 % over four
  // interleaved pairs, 14-33 % less CPU per email: bench/README.md).
  const claims = new GroupCommit((ids: string[]) => claimEmails(deps.pool, ids, deps.ackWaitSeconds), {
    slots: 2,
    maxItems: 200,
    extraSlotAt: 50,
  })
  const outcomes = new GroupCommit((rs: AttemptRecord[]) => recordOutcomes(deps.pool, rs), {
    slots: 2,
    maxItems: 200,
    extraSlotAt: 50,
  })
  const slots = new Slots(deps.concurrency)
  /** performance.now() by which a stopping dispatcher gives up writing outcomes; null: running. */
  let giveUpAt: number | null = null
  const skipped = metrics.counter(
    'dispatch_skipped_total',
    'Emails named by dispatch messages with nothing to do, by reason',
    ['reason'],
  )

  async function attempt(
    email: ClaimedEmail,
    fence: Fence,
    log: Logger,
  ): Promise<{ plan: Plan; messageId: string }> {
    const waiting = email.recipients.filter((r) => !isTerminalRecipient(r.status))
    const suppressed = waiting.flatMap((r) =>
      r.suppressed ? [{ address: r.address, reason: r.suppressed }] : [],
    )
    const pending = waiting.filter((r) => !r.suppressed).map((r) => r.address)
    let messageId = ''
    try {
      messageId = messageIdFor(email)
      if (!email.content)
        return {
          plan: planUnsendable(
            email.recipients,
            'content_expired',
            'The email content is no longer stored',
            new Date(),
          ),
          messageId,
        }
      // Each claim counts an attempt, a takeover of a dead dispatcher's claim too: an email taken
      // over past the attempts the contract allows (its outcomes could not be recorded, or its
      // dispatchers kept dying mid-send) is failed instead of being sent yet again.
      if (email.attempts > deps.policy.maxRetries + 1)
        return {
          plan: planUnsendable(
            email.recipients,
            'retries_exhausted',
            'No attempt left: earlier attempts ended without a recorded outcome',
            new Date(),
          ),
          messageId,
        }
      const replies = pending.length ? await send(email, pending, messageId, fence, log) : []
      const plan = planOutcome({
        attempts: email.attempts,
        alreadySent: email.sentAt !== null,
        dueAt: email.dueAt,
        recipients: email.recipients,
        suppressed,
        result: { provider: deps.relay.provider, messageId, replies },
        now: new Date(),
        policy: deps.policy,
      })
      return { plan, messageId }
    } catch (err) {
      if (!(err instanceof RenderError)) throw err
      log.warn({ err: err.message }, 'email cannot be rendered; failing it')
      return { plan: planUnsendable(email.recipients, 'render_failed', err.message, new Date()), messageId }
    }
  }

  async function send(email: ClaimedEmail, to: string[], messageId: string, fence: Fence, log: Logger) {
    const domain = senderDomain(email.from)
    const dkim = await deps.dkim.get(email.projectId, domain)
    if (!dkim) log.warn({ domain }, 'no usable DKIM key for the sending domain; sending unsigned')
    const rendered = await deps.renderer.render(buildMessage(email, email.content!, to, deps.links ?? null))
    const raw = dkim ? dkimSign(rendered, dkim) : rendered
    const started = performance.now()
    const replies = await deps.relay.deliver(email.id, { from: senderAddress(email.from), to }, raw, fence)
    deliverySeconds.observe((performance.now() - started) / 1000)
    log.debug({ messageId, replies }, 'relay answered')
    return replies
  }

  /**
   * Writes the outcome of an attempt the relay answered. The relay has the message, so a write
   * that fails is tried again for as long as the claim can still be ours: the keeper goes on
   * refreshing it between tries (never under one: `finish`), so the claim outlives an outage of
   * the database and each try is fenced with the latest token. Given up only when a refresh found
   * the claim moved (another dispatcher holds it: no write of ours can land) or when a stopping
   * dispatcher reaches its drain's deadline (the claim then goes stale and is taken over, as a
   * crash's would).
   */
  async function record(
    email: ClaimedEmail,
    plan: Plan,
    messageId: string,
    keeper: ClaimKeeper,
    log: Logger,
  ): Promise<OutboxRows | null> {
    for (let i = 0; ; i++) {
      try {
        return await keeper.finish(() => outcomes.submit({ email, plan, messageId }))
      } catch (err) {
        const wait = RECORD_RETRY_MS[Math.min(i, RECORD_RETRY_MS.length - 1)]!
        if (keeper.isLost()) {
          log.error(
            { err },
            'could not record the delivery outcome and the claim is no longer ours; giving up',
          )
          throw err
        }
        if (giveUpAt !== null && performance.now() + wait >= giveUpAt) {
          log.error({ err }, 'could not record the delivery outcome before the drain ends; giving up')
          throw err
        }
        log.warn({ err, retryInMs: wait, tries: i + 1 }, 'could not record the delivery outcome; retrying')
        await sleep(wait)
      }
    }
  }

  /**
   * The message did not reach the relay, given up because the dispatcher is stopping or because
   * the claim may no longer be ours (ClaimNotHeld): the claim is given back if it still is (its
   * attempt not counted) and `null` hands the dispatch message back, so a dispatcher sends the
   * email now (or, if another one holds it, looks again once that claim could be stale). A release
   * that cannot be written leaves the claim to go stale and be taken over, as after a crash:
   * nothing was sent, so nothing can arrive twice either way.
   */
  async function release(email: ClaimedEmail, why: SendAborted, log: Logger): Promise<null> {
    const fenced = why instanceof ClaimNotHeld
    const what = fenced
      ? 'claim may no longer be ours: email not sent (final dot withheld)'
      : 'stopping: email not sent'
    try {
      const ours = await releaseClaim(deps.pool, email)
      log[fenced ? 'warn' : 'info']({ ours }, `${what}, claim given back if still ours`)
    } catch (err) {
      log.warn({ err }, `${what}; could not give the claim back: it is taken over once stale`)
    }
    return null
  }

  /**
   * One email of a message: claim it, deliver it, record the outcome, then start publishing its
   * events. Answers how long to wait before the message should come back when another dispatcher
   * holds a fresh claim on it, or null when the dispatcher stopped, or found its claim not safely
   * its own, before sending it.
   */
  async function dispatchOne(emailId: string, seq: number): Promise<number | undefined | null> {
    let log = logger.child({ emailId, seq })
    // Before the claim is asked for: the database stamps it later (ClaimKeeper's clock).
    const askedAt = performance.now()
    const claim = await claims.submit(emailId)
    if (claim.kind === 'busy') {
      skipped.inc({ reason: 'busy' })
      return claim.retryInMs
    }
    if (claim.kind === 'skip') {
      skipped.inc({ reason: claim.status === null ? 'unknown_email' : 'not_claimable' })
      log.debug({ status: claim.status }, 'nothing to dispatch')
      return undefined
    }
    const email = claim.email
    // The id the caller saw in its 202 (X-Request-Id), stored with the email at accept.
    if (email.requestId) log = log.child({ requestId: email.requestId })
    const keeper = new ClaimKeeper(deps.pool, email, {
      ...keeping,
      askedAt,
      onError: (err) => log.warn({ err }, 'could not refresh the claim'),
      onLost: () => log.warn('claim no longer ours: taken over by another dispatcher, or queued again'),
    })
    let result: Awaited<ReturnType<typeof attempt>> | SendAborted
    let rows: OutboxRows | null
    try {
      try {
        result = await attempt(email, () => keeper.holds(), log)
      } catch (err) {
        if (!(err instanceof SendAborted)) throw err
        result = err
      }
      if (result instanceof SendAborted) {
        // After keeper.stop(): the release is fenced with the latest token.
        await keeper.stop()
        return release(email, result, log)
      }
      // The keeper runs on through the outcome's write and its retries (record).
      rows = await record(email, result.plan, result.messageId, keeper, log)
    } finally {
      await keeper.stop()
    }
    const { plan } = result
    if (rows === null) {
      log.warn('claim was taken over by another dispatcher; outcome not recorded')
      return undefined
    }
    for (const o of plan.outcomes) deliveries.inc({ outcome: o })
    log.info(
      {
        attempt: email.attempts,
        status: plan.status,
        nextAttemptAt: plan.nextAttemptAt,
        outcomes: plan.outcomes,
      },
      'delivery attempt recorded',
    )
    // Not awaited: the events are committed (the outbox sweeper publishes what this misses), and
    // waiting for JetStream's acks here held the slot from the next email (bench/README.md).
    void deps.outbox.publish(rows)
    return undefined
  }

  const handle = async (msg: JsMsg): Promise<void> => {
    const parsed = DispatchMessage.safeParse(safeDecode(msg.data))
    if (!parsed.success) {
      logger.error(
        { seq: msg.seq, issue: parsed.error.issues[0]?.message },
        'malformed dispatch message dropped',
      )
      msg.term()
      return
    }
    const ids = 'emailIds' in parsed.data ? [...new Set(parsed.data.emailIds)] : [parsed.data.emailId]
    // `consume` keeps the message ours with heartbeats while we work (every third of the ack
    // wait, as the claims below): JetStream redelivers it only if this process dies.
    const results = await Promise.allSettled(ids.map((id) => slots.run(() => dispatchOne(id, msg.seq))))
    // Acked only when every email of it is recorded ("record before ack"). Otherwise it comes
    // back whole, and the emails already recorded are no longer claimable: skipped.
    const failed = results.find((r) => r.status === 'rejected')
    if (failed) throw failed.reason
    const values = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
    // Stopping, or a claim that may no longer be ours: what was not started or not sent goes to
    // a dispatcher now (one that finds the claim held by another looks again once it could be stale).
    if (values.includes(null)) {
      msg.nak()
      return
    }
    const waits = values.filter((v): v is number => typeof v === 'number')
    if (waits.length) msg.nak(Math.max(...waits))
    else msg.ack()
  }
  return {
    handle,
    /**
     * Emails not yet started are left to the message's redelivery; sends that have not written
     * their final dot are given up and their claims given back; those past it wait for the
     * relay's answer (at most SMTP_DATA_TIMEOUT_SECONDS, within the drain: env.ts) and are recorded,
     * since the relay may have the message and another dispatcher would send it again; an outcome
     * write still failing is tried until the drain's deadline (`drainMs` from now), then given up.
     */
    stop: () => {
      giveUpAt ??= performance.now() + deps.drainMs
      slots.close()
      deps.relay.stopSending()
    },
  }
}

function safeDecode(data: Uint8Array): unknown {
  try {
    return decodeJson(data)
  } catch {
    return undefined
  }
}
