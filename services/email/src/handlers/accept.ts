import { closeWithin } from '@mailer/bus'
import {
  type Caller,
  type DryRunResult,
  fail,
  isMailerError,
  MailerError,
  newId,
  requireProject,
  type SendResult,
} from '@mailer/contracts'
import { createPgPool, GroupCommit } from '@mailer/db'
import type { EmailContext } from '../app.js'
import { broadcastRateLimit } from '../domain/broadcast-share.js'
import { mapInTurn } from '../domain/in-turn.js'
import { type Admission, admit, counterWindows } from '../domain/limits.js'
import { NearLimit } from '../domain/near-limit.js'
import {
  type CheckedSend,
  checkSend,
  type PreparedSend,
  prepareSend,
  type SendContext,
} from '../domain/prepare.js'
import { checkSuppression, suppressionError } from '../domain/recipients.js'
import { acceptedStatus } from '../domain/records.js'
import { type BroadcastRef, sendKey } from '../domain/send-key.js'
import { type Limits, type NewEmail, type StoreRequest, storeMany } from '../infra/accept-store.js'
import {
  findByKeys,
  type KeyedEmail,
  type LookupQuery,
  lookupMany,
  type SendLookups,
} from '../infra/send-lookups.js'

/** One send input with the idempotency key sources around it. */
export interface AcceptItem {
  raw: unknown
  /** Wins over the input's own `idempotencyKey` (the single send's header, RPC `opts`). */
  overrideKey?: string | undefined
  /** Used when the input has no key of its own (a batch's `<header>:<index>`). */
  fallbackKey?: string | undefined
}

export type Outcome = { result: SendResult | DryRunResult } | { error: MailerError }
export type Accept = (
  caller: Caller,
  items: AcceptItem[],
  opts: { source: string; dryRun?: boolean },
) => Promise<Outcome[]>

interface Keyed<T> {
  i: number
  key: string | null
  /** A broadcast's email: its broadcast and contact (its key is in the broadcasts' namespace). */
  broadcast: BroadcastRef | null
  send: T
}

/** Every recipient address of these sends, once. */
const addressesOf = (sends: Array<Keyed<CheckedSend>>): string[] => [
  ...new Set(sends.flatMap((c) => c.send.recipients.map((r) => r.address))),
]

const mismatch = () =>
  fail(
    'idempotency_payload_mismatch',
    'This idempotency key was already used with a different request body',
    'idempotencyKey',
  )

/** A send under a key `held` holds: its first answer again, or 409 when the body differs. */
const repeatOf = (held: KeyedEmail, hash: string): Outcome =>
  held.requestHash === hash
    ? { result: { id: held.id, status: acceptedStatus(held), idempotent: true } }
    : { error: mismatch() }

/**
 * The accept path shared by the send and batch routes (and any RPC entry): every check in the
 * contract's order, then one transaction for all admitted emails, then publishing after the
 * commit without waiting for it. Each item ends with a result or its own error, in input order.
 */
export function makeAcceptor(ctx: EmailContext): Accept {
  const { rt, metrics } = ctx
  const env = rt.env
  // The hot path's SQL goes through plain pg (Prisma adds ~1.5 ms per query), and concurrent
  // requests share write transactions (group commit).
  const pool = createPgPool(env.DATABASE_URL, { max: 6, queryTimeoutMs: env.DATABASE_QUERY_TIMEOUT_MS })
  // Closed once in-flight requests are answered (the bus drain waits for them; a second drain is a no-op).
  rt.onStop(async () => {
    await rt.bus.drain()
    await closeWithin('email accept pg pool', () => pool.end(), rt.logger, rt.dbWaits)
  })
  // All sends of a project update the same counter rows, locked from the count to the commit (an
  // fsync): one transaction per request capped a project at ~150 sends/s whatever the concurrency.
  // Requests that arrive while a write is in flight are stored together, one count per project, in
  // arrival order, so limits stay exact (storeMany).
  const writer = new GroupCommit((reqs: StoreRequest[]) => storeMany(pool, reqs), {
    slots: 2,
    maxItems: 1_000,
    sizeOf: (r) => r.emails.length,
    // A second write at once only for a batch's worth waiting (see GroupCommitOptions).
    extraSlotAt: 100,
  })
  // Reads before the write, where there are any, are batched the same way: one round trip for
  // the requests that arrive while a lookup is in flight, instead of one per request.
  const lookups = new GroupCommit((qs: LookupQuery[]) => lookupMany(pool, qs), {
    slots: 2,
    maxItems: 1_000,
    sizeOf: (q) => Math.max(1, q.addresses.length),
    extraSlotAt: 100,
  })
  // Requests write without reading first (the read was a third of the round trips; without it
  // 12-19 % more single sends per second: bench/README.md): the statement leaves out the emails
  // of suppressed recipients, and a taken idempotency key shows as an insert that did nothing.
  // Only projects a limit refused lately, and dry runs, read first (NearLimit).
  const nearLimit = new NearLimit()

  const run: Accept = async (caller, items, opts) => {
    const project = requireProject(caller)
    const live = caller.mode === 'live'
    // A live send to a suppressed address is refused. A broadcast never makes an email for one,
    // whatever its key (contract.md part 5: suppressed addresses are skipped), so a test-key
    // broadcast reaches the contacts a live one would; a test key's own sends skip the list.
    const suppressible = live || opts.source === 'broadcast'
    // Which namespace the request's keys are looked up in (send-key.ts).
    const broadcastKeys = opts.source === 'broadcast'
    const now = new Date()
    const outcomes: Outcome[] = new Array(items.length)
    /** Reads the list for sends not checked against it yet; a suppressed one gets its 422. */
    const refuseSuppressed = async (sends: Array<Keyed<CheckedSend>>) => {
      const { suppressed: listed } = await lookups.submit({
        projectId: project.id,
        addresses: addressesOf(sends),
        keys: [],
        broadcast: broadcastKeys,
        windows: null,
      })
      for (const c of sends) {
        const e = suppressionError(c.send.recipients, listed)
        if (e) outcomes[c.i] = { error: e }
      }
    }

    const sctx: SendContext = {
      projectId: project.id,
      defaultFrom: project.defaultFrom,
      domains: await ctx.domains.get(project.id),
      live,
      now,
      maxMessageBytes: env.MAX_MESSAGE_BYTES,
      publicUrl: env.PUBLIC_URL,
      templates: ctx.templates,
    }

    // parse → sender → recipients
    const checked: Keyed<CheckedSend>[] = []
    items.forEach((item, i) => {
      try {
        const send = checkSend(item.raw, sctx)
        const given = item.overrideKey ?? send.input.idempotencyKey ?? item.fallbackKey ?? null
        checked.push({ i, send, ...sendKey(given, opts.source) })
      } catch (e) {
        if (!isMailerError(e)) throw e
        outcomes[i] = { error: e }
      }
    })

    // A dry run answers from the reads alone; a project near its limits is refused from them.
    const readFirst = opts.dryRun === true || nearLimit.has(project.id)
    // The suppression list, the idempotency keys and the limit counters, read in one round trip.
    const limits: Limits | null = live
      ? {
          windows: counterWindows(now, env.RATE_PERIOD),
          // Broadcast emails get only their share of the rate (transactional sends go first).
          rateLimit:
            opts.source === 'broadcast'
              ? broadcastRateLimit(env.RATE_LIMIT, env.BROADCAST_RATE_SHARE)
              : env.RATE_LIMIT,
          dailyLimit: project.dailyLimit,
        }
      : null
    const {
      suppressed,
      keyed: existing,
      counters,
    } = readFirst && checked.length > 0
      ? await lookups.submit({
          projectId: project.id,
          addresses: suppressible ? addressesOf(checked) : [],
          keys: [...new Set(checked.flatMap((c) => (c.key ? [c.key] : [])))],
          broadcast: broadcastKeys,
          windows: limits?.windows ?? null,
        })
      : ({ suppressed: new Set<string>(), keyed: new Map(), counters: null } satisfies SendLookups)

    // suppression (live and broadcast only) → headers → template → subject → attachments → size → schedule
    const unread: Keyed<CheckedSend>[] = []
    // One item at a time, other requests let in between (a template's render can be heavy); the
    // templates they name fetched together first, not one round trip after another.
    const named = checked.flatMap((c) => (c.send.input.template === undefined ? [] : [c.send.input.template]))
    if (named.length > 0) await ctx.templates.prefetch(project.id, named)
    const prepared = await mapInTurn(checked, async (c): Promise<Keyed<PreparedSend> | null> => {
      try {
        if (suppressible && readFirst) checkSuppression(c.send.recipients, suppressed)
        return { i: c.i, key: c.key, broadcast: c.broadcast, send: await prepareSend(c.send, sctx) }
      } catch (e) {
        if (!isMailerError(e)) throw e
        outcomes[c.i] = { error: e }
        if (suppressible && !readFirst) unread.push(c)
        return null
      }
    })
    // A send failing a later check without the list read yet: a suppressed recipient comes first.
    if (unread.length > 0) await refuseSuppressed(unread)

    // idempotency: a known key answers its first result again (or 409); a key repeated inside
    // this request follows the first item holding it.
    const fresh: Keyed<PreparedSend>[] = []
    const followers: Array<Keyed<PreparedSend> & { leader: Keyed<PreparedSend> }> = []
    const leaders = new Map<string, Keyed<PreparedSend>>()
    for (const p of prepared) {
      if (!p) continue
      if (p.key) {
        const ex = existing.get(p.key)
        if (ex) {
          outcomes[p.i] = repeatOf(ex, p.send.hash)
          continue
        }
        const leader = leaders.get(p.key)
        if (leader) {
          followers.push({ ...p, leader })
          continue
        }
        leaders.set(p.key, p)
      }
      fresh.push(p)
    }

    const statusOf = (s: PreparedSend): SendResult['status'] =>
      !live ? 'test' : s.scheduledAt ? 'scheduled' : 'queued'
    const limitError = (code: 'rate_limited' | 'daily_limit_exceeded') =>
      code === 'rate_limited'
        ? new MailerError(
            'rate_limited',
            // The limit this send was held to (a broadcast's is its share of the rate).
            `Too many emails: at most ${limits?.rateLimit ?? env.RATE_LIMIT} per ${env.RATE_PERIOD} seconds`,
          )
        : new MailerError(
            'daily_limit_exceeded',
            `The project's daily limit of ${project.dailyLimit} emails is reached; it resets at 00:00 UTC`,
          )

    // rate limit → daily limit, first as the counters stood a moment ago (so a client hammering
    // past its limit costs no writes), then for real when storing.
    const pre: Admission =
      limits && counters
        ? admit(fresh.length, counters, limits.windows.elapsed, limits.rateLimit, limits.dailyLimit)
        : { admitted: fresh.length, errorFor: () => 'rate_limited' }
    fresh.slice(pre.admitted).forEach((p, k) => {
      outcomes[p.i] = { error: limitError(pre.errorFor(pre.admitted + k)) }
    })
    const candidates = fresh.slice(0, pre.admitted)
    let refusedByStore = 0
    // Keys another email turned out to hold when storing (found by the items that lost them).
    const held = new Map<string, KeyedEmail>()

    if (opts.dryRun) {
      for (const p of candidates) outcomes[p.i] = { result: { id: null, status: statusOf(p.send) } }
    } else if (candidates.length > 0) {
      const emails: NewEmail[] = candidates.map((p) => ({
        id: newId('email'),
        send: p.send,
        key: p.key,
        broadcast: p.broadcast,
        status: statusOf(p.send),
      }))
      const stored = await writer.submit({
        requestId: caller.requestId,
        projectId: project.id,
        apiKeyId: caller.via === 'api' ? caller.apiKeyId : null,
        mode: live ? 'live' : 'test',
        source: opts.source,
        now,
        retentionDays: env.CONTENT_RETENTION_DAYS,
        limits,
        emails,
      })
      ctx.publish(stored.outboxRows)

      const lost: Keyed<PreparedSend>[] = []
      refusedByStore = stored.refused.size
      emails.forEach((e, j) => {
        const p = candidates[j]!
        const refused = stored.refused.get(e.id)
        const listed = stored.suppressed.get(e.id)
        const suppressedError = listed ? suppressionError(p.send.recipients, listed) : null
        if (suppressedError) outcomes[p.i] = { error: suppressedError }
        else if (refused) outcomes[p.i] = { error: limitError(refused) }
        else if (stored.accepted.has(e.id)) outcomes[p.i] = { result: { id: e.id, status: e.status } }
        else lost.push(p)
      })
      // A concurrent request committed the same key first: answer as its repeat.
      if (lost.length > 0) {
        const winners = await findByKeys(
          rt.db,
          project.id,
          lost.map((p) => p.key!),
          broadcastKeys,
        )
        for (const p of lost) {
          const w = winners.get(p.key!)
          // The request that took the key was refused or rolled back after this one lost the key
          // to it: the key is free again, and a retry with it gets a real answer.
          if (!w)
            throw new MailerError(
              'service_unavailable',
              'A concurrent request with the same idempotency key did not complete; retry',
            )
          held.set(p.key!, w)
          outcomes[p.i] = repeatOf(w, p.send.hash)
        }
      }
    }

    if (limits) {
      nearLimit.observe(project.id, {
        refused: pre.admitted < fresh.length || refusedByStore > 0,
        roomRead: counters !== null && fresh.length > 0,
      })
    }

    // A leader refused for a suppressed recipient of its own stored nothing and took no key (the
    // statement leaves such emails out), so a follower with another body is a first send under
    // that key, as it would be sent after it: it runs again on its own (rare: no hot-path cost).
    const again: Array<Keyed<PreparedSend>> = []
    for (const f of followers) {
      const lead = outcomes[f.leader.i]!
      // The key was another email's already: each item is a repeat of that email, whatever the
      // leader's body (as the read-first path answers from the keys it read).
      const w = held.get(f.key!)
      if (w) outcomes[f.i] = repeatOf(w, f.send.hash)
      else if ('error' in lead) {
        if (lead.error.code === 'recipient_suppressed' && f.send.hash !== f.leader.send.hash) again.push(f)
        else outcomes[f.i] = lead
      } else if (f.send.hash !== f.leader.send.hash) outcomes[f.i] = { error: mismatch() }
      else
        outcomes[f.i] = {
          result: lead.result.id === null ? lead.result : { ...lead.result, idempotent: true },
        }
    }
    // A follower with a body of its own has recipients of its own, which nothing in this request
    // checked against the list unless it read first; suppression comes before idempotency, so
    // they are read now (only for such followers: rare).
    const own = followers.filter((f) => f.send.hash !== f.leader.send.hash && !again.includes(f))
    if (suppressible && !readFirst && own.length > 0) await refuseSuppressed(own)
    if (again.length > 0) {
      const rerun = await run(
        caller,
        again.map((f) => items[f.i]!),
        opts,
      )
      again.forEach((f, k) => {
        outcomes[f.i] = rerun[k]!
      })
    }
    return outcomes
  }

  return async (caller, items, opts) => {
    const end = metrics.acceptSeconds.startTimer({ source: opts.source })
    const outcomes = await run(caller, items, opts)
    let accepted = 0
    for (const o of outcomes) {
      if ('error' in o) metrics.rejected.inc({ source: opts.source, code: o.error.code })
      else if (!('idempotent' in o.result && o.result.idempotent) && o.result.id !== null) accepted++
    }
    if (accepted > 0) metrics.accepted.inc({ source: opts.source, mode: caller.mode }, accepted)
    end()
    rt.logger.debug(
      { requestId: caller.requestId, source: opts.source, items: items.length, accepted },
      'send accepted',
    )
    return outcomes
  }
}
