import type { Outbox } from '@mailer/bus'
import { type DevEventBody, type EventPayload, fail, isId, noSuch } from '@mailer/contracts'
import type { Db } from '@mailer/db'
import { buildEvent, type EmailSummary, recordEvents } from '@mailer/email-core'
import type { OutboxRows } from '../app.js'
import { planDevEvent } from '../domain/dev-event.js'
import { SuppressionStore } from './suppression-store.js'

// Timestamps the dispatcher would set for the same outcome, each only once.
const EMAIL_SQL = `
UPDATE emails SET
  status = $2,
  sent_at = CASE WHEN $2 IN ('sent', 'delivered') THEN COALESCE(sent_at, $3) ELSE sent_at END,
  delivered_at = CASE WHEN $2 = 'delivered' THEN COALESCE(delivered_at, $3) ELSE delivered_at END,
  failed_at = CASE WHEN $2 = 'failed' THEN COALESCE(failed_at, $3) ELSE failed_at END
WHERE id = $1`

/**
 * Records a faked delivery event (POST /v1/admin/dev/events) the way the dispatcher records a
 * real one: in one transaction the recipient and email statuses, the suppression a bounce or
 * complaint adds, the timeline row and the outbox row that takes it to webhooks. The email row
 * is locked first so that concurrent fakes of one email apply one after the other.
 */
export class DevEventStore {
  constructor(
    private readonly db: Db,
    private readonly outbox: Outbox,
  ) {}

  async record(input: DevEventBody, now: Date): Promise<{ event: EventPayload; rows: OutboxRows }> {
    const id = input.emailId
    if (!isId('email', id)) throw fail('email_not_found', noSuch('email', 'id', id, 'email'), 'emailId')
    return this.db.$transaction(async (tx) => {
      const locked = await tx.$queryRaw<
        Array<{ id: string }>
      >`SELECT id FROM emails WHERE id = ${id} FOR UPDATE`
      const email = locked.length
        ? await tx.email.findUnique({ where: { id }, include: { recipients: true } })
        : null
      if (!email) throw fail('email_not_found', noSuch('email', 'id', id, 'email'), 'emailId')

      const plan = planDevEvent(email, input.type, input.recipient, now)
      const r = plan.recipient
      if (r) {
        await tx.emailRecipient.update({
          where: { emailId_address: { emailId: id, address: r.address } },
          data: {
            status: r.status,
            smtpStatus: r.smtpStatus,
            smtpResponse: r.smtpResponse,
            ...(r.bounceType ? { bounceType: r.bounceType } : {}),
            ...(r.deliveryMs !== null ? { deliveryMs: r.deliveryMs } : {}),
            lastEventAt: now,
          },
        })
      }
      if (plan.emailStatus && plan.emailStatus !== email.status) {
        await tx.$executeRawUnsafe(EMAIL_SQL, id, plan.emailStatus, now)
      }
      if (plan.suppress && plan.event.recipient) {
        await new SuppressionStore(tx).add(plan.event.recipient, plan.suppress, id)
      }
      const summary: EmailSummary = {
        id,
        projectId: email.projectId,
        mode: email.mode,
        from: email.from,
        subject: email.subject,
        tags: (email.tags ?? {}) as Record<string, string>,
      }
      const event = buildEvent(summary, plan.event)
      const rows = await recordEvents(tx, this.outbox, [{ email: summary, event }])
      return { event, rows }
    })
  }
}
