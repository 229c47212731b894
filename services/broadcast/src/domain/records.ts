import type {
  AudienceRecord,
  BroadcastRecord,
  BroadcastStatus,
  BroadcastSummaryRecord,
  ContactRecord,
} from '@mailer/contracts'

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null)

/** A contact row as the stores select it (camelCase aliases). */
export interface ContactRow {
  id: string
  email: string
  firstName: string | null
  lastName: string | null
  unsubscribed: boolean
  data: unknown
  createdAt: Date
  updatedAt: Date
}

export interface AudienceRow {
  id: string
  name: string
  contactCount: number
  createdAt: Date
  updatedAt: Date
}

/** A broadcast as the list selects it: without its html and text. */
export interface BroadcastSummaryRow {
  id: string
  projectId: string
  audienceId: string
  name: string | null
  from: string
  subject: string
  status: string
  scheduledAt: Date | null
  resumeAt: Date | null
  startedAt: Date | null
  completedAt: Date | null
  createdAt: Date
  updatedAt: Date
}

export interface BroadcastRow extends BroadcastSummaryRow {
  html: string
  text: string | null
}

const asObject = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {}

export function toContactRecord(c: ContactRow): ContactRecord {
  return {
    id: c.id,
    email: c.email,
    firstName: c.firstName,
    lastName: c.lastName,
    unsubscribed: c.unsubscribed,
    data: asObject(c.data),
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  }
}

export function toAudienceRecord(a: AudienceRow): AudienceRecord {
  return {
    id: a.id,
    name: a.name,
    contactCount: Number(a.contactCount),
    createdAt: a.createdAt.toISOString(),
    updatedAt: a.updatedAt.toISOString(),
  }
}

export function toBroadcastRecord(b: BroadcastRow, counts: Record<string, number>): BroadcastRecord {
  return { ...toBroadcastSummary(b, counts), html: b.html, text: b.text }
}

export function toBroadcastSummary(
  b: BroadcastSummaryRow,
  counts: Record<string, number>,
): BroadcastSummaryRecord {
  return {
    id: b.id,
    name: b.name,
    audienceId: b.audienceId,
    from: b.from,
    subject: b.subject,
    status: b.status as BroadcastStatus,
    counts,
    scheduledAt: iso(b.scheduledAt),
    resumeAt: iso(b.resumeAt),
    startedAt: iso(b.startedAt),
    completedAt: iso(b.completedAt),
    createdAt: b.createdAt.toISOString(),
    updatedAt: b.updatedAt.toISOString(),
  }
}
