import type { Outbox } from '@mailer/bus'
import {
  type Cursor,
  fail,
  isId,
  type ListEmailsQuery,
  MAX_RECORD_EVENTS,
  noSuch,
  tagSplits,
} from '@mailer/contracts'
import { type Db, type Email, likeLiteral, type Prisma, pastPlace, scanList } from '@mailer/db'
import { buildEvent, type EmailSummary, type NewEvent, recordEvents } from '@mailer/email-core'

const DAY_MS = 86_400_000

/** Recipient statuses with no final answer from the relay yet (the rest are final). */
const NOT_STARTED = ['queued', 'deferred'] as const

const summaryOf = (e: Email): EmailSummary => ({
  id: e.id,
  projectId: e.projectId,
  mode: e.mode,
  from: e.from,
  subject: e.subject,
  tags: (e.tags ?? {}) as Record<string, string>,
})

/**
 * Reads and state changes of stored emails, scoped to one project. Reads also take `null` for
 * the admin routes, which see every project's emails.
 */
export class EmailStore {
  constructor(
    private readonly db: Db,
    private readonly outbox: Outbox,
    /** Rows a filtered list reads past its cursor at most (LIST_SCAN_ROWS). */
    private readonly scanRows = 20_000,
  ) {}

  /**
   * The project's email with its first MAX_RECORD_EVENTS events, or 404 `email_not_found`
   * (another project's email is just as missing).
   */
  async get(projectId: string | null, id: string) {
    if (!isId('email', id)) throw fail('email_not_found', noSuch('email', 'id', id, 'email'), 'id')
    const scope = projectId ?? undefined
    const [email, events] = await Promise.all([
      this.db.email.findFirst({ where: { id, projectId: scope }, include: { recipients: true } }),
      this.db.emailEvent.findMany({
        where: { emailId: id, projectId: scope },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        take: MAX_RECORD_EVENTS,
      }),
    ])
    if (!email) throw fail('email_not_found', noSuch('email', 'id', id, 'email'), 'id')
    return { email, events }
  }

  /**
   * Newest first, up to `limit + 1` matching rows so the caller can tell whether another page
   * exists. `status`, `from`, `q` and `tag` have no index: they are checked on the rows read in
   * the list's order, so a filter few rows match would read the project's whole history. The
   * scan therefore reads at most `scanRows` rows past the cursor and says where it stopped
   * (`stop`, null when it reached the end): the caller answers a short page with a cursor from
   * there (scannedPage). `to` goes through email_recipients_address_idx and reads only that
   * address's emails: it is not bounded.
   */
  async list(
    projectId: string | null,
    q: ListEmailsQuery,
    after: Cursor | undefined,
  ): Promise<{ rows: Email[]; stop: Cursor | null }> {
    // What the (project_id, created_at, id) or (created_at, id) index reads in order.
    const scope: Prisma.EmailWhereInput[] = projectId ? [{ projectId }] : []
    if (q.since) scope.push({ createdAt: { gte: new Date(q.since) } })
    if (q.until) scope.push({ createdAt: { lt: new Date(q.until) } })
    if (after) scope.push(pastPlace(after))
    const filters: Prisma.EmailWhereInput[] = []
    if (q.status) filters.push({ status: q.status })
    if (q.from)
      filters.push({
        OR: [
          { from: { equals: q.from, mode: 'insensitive' } },
          { from: { endsWith: `<${likeLiteral(q.from)}>`, mode: 'insensitive' } },
        ],
      })
    if (q.q) filters.push({ subject: { contains: likeLiteral(q.q), mode: 'insensitive' } })
    if (q.tag) filters.push({ OR: tagSplits(q.tag).map(([k, v]) => ({ tags: { path: [k], equals: v } })) })
    const orderBy: Prisma.EmailOrderByWithRelationInput[] = [{ createdAt: 'desc' }, { id: 'desc' }]
    const bounded = filters.length > 0 && !q.to
    if (q.to) filters.push({ recipients: { some: { address: q.to } } })
    return scanList(scope, filters, bounded ? this.scanRows : null, {
      edge: (r) => this.db.email.findMany({ ...r, orderBy, select: { createdAt: true, id: true } }),
      rows: (where) => this.db.email.findMany({ where, orderBy, take: q.limit + 1 }),
    })
  }

  /** The stored content; 404 `content_expired` once its retention has passed (or it was purged). */
  async content(projectId: string | null, id: string) {
    if (!isId('email', id)) throw fail('email_not_found', noSuch('email', 'id', id, 'email'), 'id')
    const email = await this.db.email.findFirst({
      where: { id, projectId: projectId ?? undefined },
      select: { id: true, content: true },
    })
    if (!email) throw fail('email_not_found', noSuch('email', 'id', id, 'email'), 'id')
    if (!email.content || email.content.expiresAt.getTime() <= Date.now()) {
      throw fail('content_expired', "This email's content is past its retention period and was deleted", 'id')
    }
    return email.content
  }

  /**
   * scheduled or queued (not yet claimed by a dispatcher) → canceled, with `email.canceled`; but
   * not once the relay has given any recipient its final answer: a platform-limit answer puts an
   * email back to `queued` for the recipients still waiting, and "canceled" (never sent) would then
   * follow `email.delivered` or `email.bounced` of the others. Its recipients become `canceled`
   * in the same transaction, only once the email is ours (a dispatcher's claim and outcome wait
   * for the email row, or took it first and the cancel is refused), so no view shows a canceled
   * email still waiting to go to someone.
   */
  async cancel(projectId: string, id: string) {
    const now = new Date()
    return this.transition(projectId, id, {
      from: ['scheduled', 'queued'],
      where: { recipients: { every: { status: { in: [...NOT_STARTED] } } } },
      data: { status: 'canceled', canceledAt: now },
      event: { type: 'email.canceled', at: now },
      also: (tx) =>
        tx.emailRecipient.updateMany({
          where: { emailId: id, status: { in: [...NOT_STARTED] } },
          data: { status: 'canceled', lastEventAt: now },
        }),
      refusal: 'Only scheduled or queued emails can be canceled',
      refusalInFrom:
        'This email was already delivered to (or bounced by) some of its recipients; it can no longer be canceled',
    })
  }

  /** A scheduled email gets a new time (and its content is kept long enough for it). */
  async reschedule(projectId: string, id: string, at: Date, retentionDays: number) {
    return this.transition(projectId, id, {
      from: ['scheduled'],
      data: { scheduledAt: at },
      event: { type: 'email.scheduled', extra: { scheduledAt: at.toISOString(), rescheduled: true } },
      refusal: 'Only scheduled emails can be rescheduled',
      also: (tx) =>
        tx.$executeRawUnsafe(
          'UPDATE email_contents SET expires_at = GREATEST(expires_at, $2::timestamptz) WHERE email_id = $1',
          id,
          new Date(at.getTime() + retentionDays * DAY_MS),
        ),
    })
  }

  /**
   * Moves the email to `data` only from one of `from` (one conditional UPDATE, so a dispatcher
   * claiming it at the same moment either wins or loses cleanly), and records the event.
   * Not found → 404; found in another state → 409 `not_cancelable`.
   */
  private async transition(
    projectId: string,
    id: string,
    t: {
      from: string[]
      /** A further condition on the email; refused with `refusalInFrom` when only it fails. */
      where?: Prisma.EmailWhereInput
      data: Prisma.EmailUpdateManyMutationInput
      event: NewEvent
      refusal: string
      refusalInFrom?: string
      also?: (tx: Prisma.TransactionClient) => Promise<unknown>
    },
  ) {
    if (!isId('email', id)) throw fail('email_not_found', noSuch('email', 'id', id, 'email'), 'id')
    const done = await this.db.$transaction(async (tx) => {
      const [row] = await tx.email.updateManyAndReturn({
        where: { id, projectId, status: { in: t.from }, ...t.where },
        data: t.data,
      })
      if (!row) return null
      await t.also?.(tx)
      const email = summaryOf(row)
      return recordEvents(tx, this.outbox, [{ email, event: buildEvent(email, t.event) }])
    })
    if (done) return done
    const current = await this.db.email.findFirst({ where: { id, projectId }, select: { status: true } })
    if (!current) throw fail('email_not_found', noSuch('email', 'id', id, 'email'), 'id')
    if (t.refusalInFrom && t.from.includes(current.status)) throw fail('not_cancelable', t.refusalInFrom)
    throw fail('not_cancelable', `${t.refusal}; this email is ${current.status}`)
  }
}
