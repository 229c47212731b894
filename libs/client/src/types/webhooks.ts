import type { PageQuery } from './common.js'

export interface Webhook {
  id: string
  url: string
  /** Event types, or `['*']` for every type. */
  events: string[]
  enabled: boolean
  createdAt: string
  updatedAt: string
}

/** Create and rotate-secret answers: the only times the signing secret is shown. */
export interface WebhookWithSecret extends Webhook {
  secret: string
}

export interface CreateWebhookInput {
  url: string
  events?: string[]
  enabled?: boolean
}

export interface UpdateWebhookInput {
  url?: string
  events?: string[]
  enabled?: boolean
}

export interface DeletedWebhook {
  id: string
  deleted: true
}

export interface WebhookDelivery {
  id: string
  webhookId: string
  eventId: string
  eventType: string
  attempt: number
  status: 'pending' | 'success' | 'failed'
  responseCode: number | null
  responseBody: string | null
  nextAttemptAt: string | null
  createdAt: string
  completedAt: string | null
}

/** An event exactly as webhooks receive it and `events.list` returns it. */
export interface MailerEvent {
  id: string
  type: string
  createdAt: string
  data: {
    emailId: string
    recipient: string | null
    from: string
    subject: string
    tags: Record<string, string>
    [extra: string]: unknown
  }
}

/** An item of `admin.events.list`: the event plus the project it belongs to. */
export interface AdminMailerEvent extends MailerEvent {
  projectId: string
}

export interface EventsQuery extends PageQuery {
  type?: string
  emailId?: string
  since?: string | Date
  until?: string | Date
}

export interface AdminEventsQuery extends EventsQuery {
  /** A project slug; all projects when left out. */
  project?: string
}

export type AnalyticsRange = '7d' | '30d' | '90d'

export interface AnalyticsQuery {
  range?: AnalyticsRange
  /** `hour` only with `range: '7d'`. */
  interval?: 'day' | 'hour'
}

export interface AdminAnalyticsQuery extends AnalyticsQuery {
  project?: string
}

export interface AnalyticsCounts {
  sent: number
  delivered: number
  deferred: number
  bounced: number
  complained: number
  rejected: number
  failed: number
  opened: number
  clicked: number
}

export interface Analytics {
  range: AnalyticsRange
  interval: 'day' | 'hour'
  buckets: (AnalyticsCounts & { bucket: string })[]
  totals: AnalyticsCounts
  deliveryRate: number | null
  bounceRate: number | null
  complaintRate: number | null
  p50DeliveryMs: number | null
  p95DeliveryMs: number | null
  topTags: { value: string; count: number }[]
  topBouncedDomains: { value: string; count: number }[]
}
