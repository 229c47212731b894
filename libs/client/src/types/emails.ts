import type { PageQuery } from './common.js'

/** Statuses an email can have (contract.md part 3). */
export type EmailStatus =
  | 'queued'
  | 'scheduled'
  | 'sending'
  | 'sent'
  | 'delivered'
  | 'deferred'
  | 'bounced'
  | 'complained'
  | 'rejected'
  | 'failed'
  | 'test'
  | 'canceled'

export interface Attachment {
  filename: string
  /** Base64 of the file's bytes. */
  content: string
  type?: string
  disposition?: 'attachment' | 'inline'
  contentId?: string
}

/** What `emails.send` takes. One of `html`, `text` or `template` is required. */
export interface SendEmailInput {
  /** `"Name <a@b.c>"` or `a@b.c`, on a domain of the project; optional with a project `defaultFrom`. */
  from?: string
  to: string | string[]
  cc?: string | string[]
  bcc?: string | string[]
  replyTo?: string | string[]
  subject?: string
  html?: string
  text?: string
  /** A template name; `data` fills its variables. */
  template?: string
  data?: Record<string, unknown>
  headers?: Record<string, string>
  attachments?: Attachment[]
  tags?: Record<string, string>
  /** ISO 8601 with an offset, in the future, at most 30 days ahead. */
  scheduledAt?: string
  trackOpens?: boolean
  trackClicks?: boolean
  idempotencyKey?: string
}

export interface SendResult {
  id: string
  status: 'queued' | 'scheduled' | 'test'
  /** True when this is the answer to an earlier send with the same idempotency key. */
  idempotent?: boolean
}

export interface BatchItemError {
  error: { type: string; code: string; message: string; param?: string }
}
/** A `dryRun` item that would be accepted: nothing was stored, so there is no id. */
export interface DryRunResult {
  id: null
  status: SendResult['status']
}

/** One entry per input, in input order: a result, or the item's error. */
export type BatchItemResult = SendResult | DryRunResult | BatchItemError

export interface BatchResponse {
  data: BatchItemResult[]
}

export interface EmailRecipient {
  address: string
  kind: 'to' | 'cc' | 'bcc'
  status: string
  smtpStatus: number | null
  smtpResponse: string | null
  deliveryMs: number | null
  bounceType: string | null
  lastEventAt: string | null
}

export interface TimelineEvent {
  id: string
  type: string
  recipient: string | null
  data: Record<string, unknown>
  createdAt: string
}

/** An email as lists return it. */
export interface EmailSummary {
  id: string
  status: EmailStatus
  mode: 'live' | 'test'
  /** `http`, `batch`, `rpc`, `broadcast`, or `admin`. */
  source: string
  apiKeyId: string | null
  from: string
  replyTo: string[]
  to: string[]
  cc: string[]
  bcc: string[]
  subject: string
  textPreview: string
  tags: Record<string, string>
  template: string | null
  templateVersion: number | null
  attempts: number
  lastError: string | null
  trackOpens: boolean
  trackClicks: boolean
  createdAt: string
  queuedAt: string | null
  sentAt: string | null
  deliveredAt: string | null
  failedAt: string | null
  scheduledAt: string | null
  openedAt: string | null
  firstClickedAt: string | null
}

/** An item of the admin email list: the summary plus the project it belongs to. */
export interface AdminEmailSummary extends EmailSummary {
  projectId: string
}

/** `admin.emails.get`: the email plus the project it belongs to. */
export interface AdminEmail extends Email {
  projectId: string
}

/** `emails.get`: the summary plus recipients and the timeline (oldest first). */
export interface Email extends EmailSummary {
  recipients: EmailRecipient[]
  events: TimelineEvent[]
}

export interface EmailContent {
  html: string | null
  text: string | null
  headers: Record<string, string>
  attachments: { filename: string; type: string; size: number }[]
}

export interface CanceledEmail {
  id: string
  status: 'canceled'
}

export interface ListEmailsQuery extends PageQuery {
  status?: EmailStatus
  to?: string
  from?: string
  /** Subject contains. */
  q?: string
  /** `key:value` */
  tag?: string
  since?: string | Date
  until?: string | Date
}

export interface AdminListEmailsQuery extends ListEmailsQuery {
  /** A project slug; all projects when left out. */
  project?: string
}
