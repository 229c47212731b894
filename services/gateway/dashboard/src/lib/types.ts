/** The API's shapes, from the SDK's hand-written types (checked there against the contracts). */
export type {
  AdminDomain,
  ApiKey,
  CreatedApiKey,
  DnsRecord,
  Domain,
  Project,
  ProjectStats,
  Suppression,
  SuppressionReason,
} from '@mailer/client-types/admin.js'
export type { DataList, Page } from '@mailer/client-types/common.js'
export type {
  Email,
  EmailContent,
  EmailRecipient,
  EmailStatus,
  EmailSummary,
  SendResult,
  TimelineEvent,
} from '@mailer/client-types/emails.js'
export type {
  Audience,
  Broadcast,
  BroadcastStatus,
  Contact,
  RenderedTemplate,
  Template,
  TemplateSummary,
  TemplateVersion,
} from '@mailer/client-types/marketing.js'
export type {
  Analytics,
  AnalyticsCounts,
  MailerEvent,
  Webhook,
  WebhookDelivery,
  WebhookWithSecret,
} from '@mailer/client-types/webhooks.js'

/** GET/POST /dashboard/api/session. */
export interface SessionInfo {
  expiresAt: string
  csrfToken: string
}
