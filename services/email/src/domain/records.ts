import type { EmailContentRecord, EmailRecord, EmailSummaryRecord, SendResult } from '@mailer/contracts'
import type { Email, EmailContent, EmailEvent, EmailRecipient } from '@mailer/db'
import type { StoredAttachment } from './attachments.js'

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null)
const KIND_ORDER: Record<string, number> = { to: 0, cc: 1, bcc: 2 }

/**
 * The status a send answered with when the email was accepted, which an idempotent repeat
 * answers again: only live emails are queued or scheduled, and only scheduled ones have a time.
 */
export function acceptedStatus(e: Pick<Email, 'mode' | 'scheduledAt'>): SendResult['status'] {
  if (e.mode === 'test') return 'test'
  return e.scheduledAt ? 'scheduled' : 'queued'
}

export function toSummaryRecord(e: Email): EmailSummaryRecord {
  return {
    id: e.id,
    status: e.status as EmailSummaryRecord['status'],
    mode: e.mode as 'live' | 'test',
    source: e.source,
    apiKeyId: e.apiKeyId,
    from: e.from,
    replyTo: e.replyTo,
    to: e.to,
    cc: e.cc,
    bcc: e.bcc,
    subject: e.subject,
    textPreview: e.textPreview,
    tags: (e.tags ?? {}) as Record<string, string>,
    template: e.template,
    templateVersion: e.templateVersion,
    attempts: e.attempts,
    lastError: e.lastError,
    trackOpens: e.trackOpens,
    trackClicks: e.trackClicks,
    createdAt: e.createdAt.toISOString(),
    queuedAt: iso(e.queuedAt),
    sentAt: iso(e.sentAt),
    deliveredAt: iso(e.deliveredAt),
    failedAt: iso(e.failedAt),
    scheduledAt: iso(e.scheduledAt),
    openedAt: iso(e.openedAt),
    firstClickedAt: iso(e.firstClickedAt),
  }
}

/**
 * A recipient's status as shown, and when it got it. Rows written by earlier releases (or by one of
 * their pods during an upgrade's rollout) left some recipients waiting where their email can never
 * move on; they read as the current release writes them, with no migration over email_recipients:
 * - a canceled email's recipients still `queued` or `deferred` read `canceled`, as of the cancel
 *   (EmailStore.cancel);
 * - a test email's recipients still `queued` read `test`, as of its `email.test` event, which is
 *   when it was accepted (accept-rows.ts).
 */
function shownState(e: Email, r: EmailRecipient): { status: string; at: Date | null } {
  if (e.status === 'canceled' && (r.status === 'queued' || r.status === 'deferred'))
    return { status: 'canceled', at: e.canceledAt ?? r.lastEventAt }
  if (e.status === 'test' && r.status === 'queued') return { status: 'test', at: e.createdAt }
  return { status: r.status, at: r.lastEventAt }
}

/** The full record: recipients in the order they were given (to, cc, bcc), events oldest first. */
export function toEmailRecord(e: Email, recipients: EmailRecipient[], events: EmailEvent[]): EmailRecord {
  const given = [...e.to, ...e.cc, ...e.bcc]
  const sorted = [...recipients].sort(
    (a, b) =>
      (KIND_ORDER[a.kind] ?? 3) - (KIND_ORDER[b.kind] ?? 3) ||
      given.indexOf(a.address) - given.indexOf(b.address),
  )
  return {
    ...toSummaryRecord(e),
    recipients: sorted.map((r) => {
      const shown = shownState(e, r)
      return {
        address: r.address,
        kind: r.kind as 'to' | 'cc' | 'bcc',
        status: shown.status,
        smtpStatus: r.smtpStatus,
        smtpResponse: r.smtpResponse,
        deliveryMs: r.deliveryMs,
        bounceType: r.bounceType,
        lastEventAt: iso(shown.at),
      }
    }),
    events: events.map((ev) => {
      const payload = ev.payload as { data?: Record<string, unknown> }
      return {
        id: ev.id,
        type: ev.type,
        recipient: ev.recipient,
        data: payload.data ?? {},
        createdAt: ev.createdAt.toISOString(),
      }
    }),
  }
}

/** The stored content as `GET /v1/emails/:id/content` shows it: attachments without their bytes. */
export function toContentRecord(c: EmailContent): EmailContentRecord {
  const attachments = (c.attachments ?? []) as unknown as StoredAttachment[]
  return {
    html: c.html,
    text: c.text,
    headers: (c.headers ?? {}) as Record<string, string>,
    attachments: attachments.map((a) => ({ filename: a.filename, type: a.type, size: a.size })),
  }
}
