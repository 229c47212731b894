import type { Outbox } from '@mailer/bus'
import type { Db } from '@mailer/db'
import { buildEvent, type EmailSummary, recordEvents } from '@mailer/email-core'
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

/** Opens and clicks from the public tracking links, recorded on the email and its timeline. */
export class TrackingStore {
  constructor(
    private readonly db: Db,
    private readonly outbox: Outbox,
  ) {}

  /** The first open only: sets opened_at and adds `email.opened`; later opens change nothing. */
  async open(emailId: string, userAgent: string | null, at: Date): Promise<OutboxRows | null> {
    return this.db.$transaction(async (tx) => {
      const rows = await tx.$queryRawUnsafe<Row[]>(
        `UPDATE emails SET opened_at = $2 WHERE id = $1 AND opened_at IS NULL ${RETURNING}`,
        emailId,
        at,
      )
      const row = rows[0]
      if (!row) return null
      const email = summaryOf(row)
      const event = buildEvent(email, {
        type: 'email.opened',
        recipient: recipientOf(row),
        at,
        extra: { userAgent },
      })
      return recordEvents(tx, this.outbox, [{ email, event }])
    })
  }

  /** Every click adds `email.clicked`; the first also sets first_clicked_at. Null: no such email. */
  async click(emailId: string, url: string, userAgent: string | null, at: Date): Promise<OutboxRows | null> {
    return this.db.$transaction(async (tx) => {
      const rows = await tx.$queryRawUnsafe<Row[]>(
        `UPDATE emails SET first_clicked_at = COALESCE(first_clicked_at, $2) WHERE id = $1 ${RETURNING}`,
        emailId,
        at,
      )
      const row = rows[0]
      if (!row) return null
      const email = summaryOf(row)
      const event = buildEvent(email, {
        type: 'email.clicked',
        recipient: recipientOf(row),
        at,
        extra: { url, userAgent },
      })
      return recordEvents(tx, this.outbox, [{ email, event }])
    })
  }
}
