import { buildEvent, type EmailSummary, recordEvents } from '@mailer/email-core'
import { every, type Loop } from '@mailer/observability'
import type { EmailContext } from '../app.js'
import { dispatchMessages } from '../domain/dispatch-messages.js'

const BATCH = 500

/**
 * The due rows of one state, oldest first, walked in the order of their partial index
 * (emails_scheduled_idx, emails_pending_idx: status, next_attempt_at) and locked as they come.
 * One state at a time: over `status IN ('queued', 'deferred')` no index gives the time order, so
 * every batch read and sorted every due row (88 ms a batch with 100,000 due after a relay outage,
 * and a backlog took time quadratic in its size to release).
 */
export const DUE_SCHEDULED_SQL = `WITH due AS (
  SELECT id FROM emails WHERE status = 'scheduled' AND scheduled_at <= now()
  ORDER BY scheduled_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
UPDATE emails e SET status = 'queued', queued_at = now() FROM due WHERE e.id = due.id
RETURNING e.id, e.project_id AS "projectId", e.mode, e.from_address AS "from", e.subject, e.tags, e.attempts`

/** `$1`: 'queued' (a relay's platform limit) or 'deferred' (a retry). See DUE_SCHEDULED_SQL. */
export const DUE_RETRIES_SQL = `WITH due AS (
  SELECT id FROM emails WHERE status = $1 AND next_attempt_at <= now()
  ORDER BY next_attempt_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
UPDATE emails e SET next_attempt_at = NULL, released_at = now() FROM due WHERE e.id = due.id
RETURNING e.id, e.attempts`

interface DueRow {
  id: string
  projectId: string
  mode: string
  from: string
  subject: string
  tags: Record<string, string> | null
  attempts: number
}

/**
 * Every second: (a) scheduled emails whose time has come become queued (`email.queued`) and get
 * dispatch messages; (b) queued/deferred emails whose `next_attempt_at` has passed (set by the
 * dispatcher when it backs off) get their next ones. A sweep's emails share messages, 50 each
 * (domain/dispatch-messages.ts). Rows are claimed with FOR UPDATE SKIP LOCKED, so any number of
 * replicas can sweep at once without doubling work.
 */
export function startDueSweeper(ctx: EmailContext, intervalMs = 1_000): Loop {
  const { rt, outbox } = ctx
  const released = rt.metrics.counter(
    'due_released_total',
    'Emails handed to the dispatcher by the due sweeper',
    ['kind'],
  )

  const releaseScheduled = async (): Promise<number> => {
    const { n, rows } = await rt.db.$transaction(async (tx) => {
      const due = await tx.$queryRawUnsafe<DueRow[]>(DUE_SCHEDULED_SQL)
      if (due.length === 0) return { n: 0, rows: [] }
      const events = await recordEvents(
        tx,
        outbox,
        due.map((r) => {
          const email: EmailSummary = {
            id: r.id,
            projectId: r.projectId,
            mode: r.mode,
            from: r.from,
            subject: r.subject,
            tags: r.tags ?? {},
          }
          return { email, event: buildEvent(email, { type: 'email.queued' }) }
        }),
      )
      const messages = await outbox.write(tx, dispatchMessages(due))
      return { n: due.length, rows: [...events, ...messages] }
    })
    ctx.publish(rows)
    if (n > 0) released.inc({ kind: 'scheduled' }, n)
    return n
  }

  const releaseRetries = async (status: 'queued' | 'deferred'): Promise<number> => {
    const { n, rows } = await rt.db.$transaction(async (tx) => {
      const due = await tx.$queryRawUnsafe<Array<Pick<DueRow, 'id' | 'attempts'>>>(DUE_RETRIES_SQL, status)
      if (due.length === 0) return { n: 0, rows: [] }
      return { n: due.length, rows: await outbox.write(tx, dispatchMessages(due, Date.now())) }
    })
    ctx.publish(rows)
    if (n > 0) released.inc({ kind: 'retry' }, n)
    return n
  }

  return every(intervalMs, 'due sweeper', rt.logger, async () => {
    while ((await releaseScheduled()) === BATCH) {}
    while ((await releaseRetries('queued')) === BATCH) {}
    while ((await releaseRetries('deferred')) === BATCH) {}
  })
}
