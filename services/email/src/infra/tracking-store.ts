import type { Outbox } from '@mailer/bus'
import type { ClickHit, OpenHit, TrackingHit } from '@mailer/contracts'
import type { Db, Prisma } from '@mailer/db'
import { buildEvent, type EmailSummary, eventMessage } from '@mailer/email-core'
import type { OutboxRows } from '../app.js'

interface Row {
  id: string
  project_id: string
  mode: string
  from_address: string
  subject: string
  tags: Record<string, string> | null
  to: string[]
  cc: string[]
  bcc: string[]
}

type Tx = Prisma.TransactionClient

const RETURNING = 'RETURNING id, project_id, mode, from_address, subject, tags, "to", cc, bcc'

const summaryOf = (r: Row): EmailSummary => ({
  id: r.id,
  projectId: r.project_id,
  mode: r.mode,
  from: r.from_address,
  subject: r.subject,
  tags: r.tags ?? {},
})

/**
 * One message goes to every recipient, so a pixel or link hit cannot tell them apart: the
 * event names the recipient only when there is just one.
 */
const recipientOf = (r: Row): string | null => {
  const all = [...r.to, ...r.cc, ...r.bcc]
  return all.length === 1 ? all[0]! : null
}

/**
 * What recording a hit did: `recorded` added its event (rows: the outbox rows to publish after the
 * commit); `unchanged` added nothing (a repeat open, a hit recorded before, an email that no
 * longer exists).
 */
export type HitOutcome = { outcome: 'recorded'; rows: OutboxRows } | { outcome: 'unchanged' }

/**
 * Opens and clicks from the public tracking links (the TRACKING stream), recorded on the email and
 * its timeline. A hit may come more than once (a redelivery after a crash between the commit and
 * the ack, the gateway's publish tried again past the stream's duplicate window): its event takes
 * the hit's id, so a second insert does nothing and the hit is announced once.
 */
export class TrackingStore {
  constructor(
    private readonly db: Db,
    private readonly outbox: Outbox,
  ) {}

  record(hit: TrackingHit): Promise<HitOutcome> {
    return hit.kind === 'open' ? this.open(hit) : this.click(hit)
  }

  /** The first open only: sets opened_at and adds `email.opened`; later opens change nothing. */
  private open(hit: OpenHit): Promise<HitOutcome> {
    return this.db.$transaction(async (tx) => {
      const rows = await tx.$queryRawUnsafe<Row[]>(
        `UPDATE emails SET opened_at = $2 WHERE id = $1 AND opened_at IS NULL ${RETURNING}`,
        hit.emailId,
        new Date(hit.at),
      )
      const row = rows[0]
      if (!row) return { outcome: 'unchanged' }
      return this.addEvent(tx, row, hit, 'email.opened', { userAgent: hit.userAgent })
    })
  }

  /**
   * Every click adds `email.clicked`; the earliest also sets first_clicked_at (LEAST: hits held
   * back by an outage may be recorded out of order). Repeating a hit changes nothing.
   */
  private click(hit: ClickHit): Promise<HitOutcome> {
    return this.db.$transaction(async (tx) => {
      const rows = await tx.$queryRawUnsafe<Row[]>(
        `UPDATE emails SET first_clicked_at = LEAST(first_clicked_at, $2) WHERE id = $1 ${RETURNING}`,
        hit.emailId,
        new Date(hit.at),
      )
      const row = rows[0]
      if (!row) return { outcome: 'unchanged' }
      return this.addEvent(tx, row, hit, 'email.clicked', { url: hit.url, userAgent: hit.userAgent })
    })
  }

  /** The hit's event on the timeline (once per hit id) and, for a live email, in the outbox. */
  private async addEvent(
    tx: Tx,
    row: Row,
    hit: TrackingHit,
    type: string,
    extra: Record<string, unknown>,
  ): Promise<HitOutcome> {
    const email = summaryOf(row)
    const at = new Date(hit.at)
    // As every event is built, but with the hit's id: the same hit twice is one event.
    const event = { ...buildEvent(email, { type, recipient: recipientOf(row), at, extra }), id: hit.id }
    const inserted = await tx.$executeRawUnsafe(
      `INSERT INTO email_events (id, project_id, email_id, mode, type, recipient, payload, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)
       ON CONFLICT (id) DO NOTHING`,
      event.id,
      email.projectId,
      email.id,
      email.mode,
      event.type,
      event.data.recipient,
      JSON.stringify(event),
      at,
    )
    if (inserted === 0) return { outcome: 'unchanged' }
    const message = eventMessage(email, event)
    return { outcome: 'recorded', rows: await this.outbox.write(tx, message ? [message] : []) }
  }
}
