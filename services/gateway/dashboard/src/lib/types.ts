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
  BroadcastSummary,
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

/** POST /dashboard/api/session, and GET when signed in. */
export interface SessionInfo {
  signedIn: true
  expiresAt: string
  csrfToken: string
}

/** GET /dashboard/api/session: 200 either way (no session is not an error there). */
export type SessionCheck = SessionInfo | { signedIn: false }
