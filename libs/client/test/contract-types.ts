/**
 * Compile-time check (run by `tsc -p tsconfig.json`): the SDK's hand-written, dependency-free
 * types agree with the service's zod contracts. Answers the service gives must fit the SDK's
 * types, and inputs the SDK takes must be accepted by the service's schemas.
 */
import type * as C from '@mailer/contracts'
import type { z } from 'zod'
import type * as T from '../src/index.js'

type Fits<A, B> = [A] extends [B] ? true : false
type Assert<X extends true> = X

export type Checks = [
  // answers
  Assert<Fits<z.infer<typeof C.ProjectRecord>, T.Project>>,
  Assert<Fits<z.infer<typeof C.ApiKeyRecord>, T.ApiKey>>,
  Assert<Fits<z.infer<typeof C.CreatedApiKey>, T.CreatedApiKey>>,
  Assert<Fits<z.infer<typeof C.MeResponse>, T.Me>>,
  Assert<Fits<z.infer<typeof C.WebhookRecord>, T.Webhook>>,
  Assert<Fits<z.infer<typeof C.WebhookWithSecret>, T.WebhookWithSecret>>,
  Assert<Fits<z.infer<typeof C.DeliveryRecord>, T.WebhookDelivery>>,
  Assert<Fits<z.infer<typeof C.DeletedWebhook>, T.DeletedWebhook>>,
  Assert<Fits<z.infer<typeof C.EventPayload>, T.MailerEvent>>,
  Assert<Fits<z.infer<typeof C.DomainRecord>, T.Domain>>,
  Assert<Fits<z.infer<typeof C.AdminDomainRecord>, T.AdminDomain>>,
  Assert<Fits<z.infer<typeof C.SuppressionRecord>, T.Suppression>>,
  Assert<Fits<z.infer<typeof C.RemovedSuppression>, T.RemovedSuppression>>,
  Assert<Fits<z.infer<typeof C.AnalyticsResponse>, T.Analytics>>,
  Assert<Fits<z.infer<typeof C.SendResult>, T.SendResult>>,
  Assert<Fits<z.infer<typeof C.BatchResponse>, T.BatchResponse>>,
  Assert<Fits<z.infer<typeof C.EmailSummaryRecord>, T.EmailSummary>>,
  Assert<Fits<z.infer<typeof C.EmailRecord>, T.Email>>,
  Assert<Fits<z.infer<typeof C.EmailContentRecord>, T.EmailContent>>,
  Assert<Fits<z.infer<typeof C.CanceledEmail>, T.CanceledEmail>>,
  Assert<Fits<z.infer<typeof C.TemplateRecord>, T.Template>>,
  Assert<Fits<z.infer<typeof C.TemplateSummaryRecord>, T.TemplateSummary>>,
  Assert<Fits<z.infer<typeof C.TemplateVersionRecord>, T.TemplateVersion>>,
  Assert<Fits<z.infer<typeof C.RenderedTemplateRecord>, T.RenderedTemplate>>,
  Assert<Fits<z.infer<typeof C.ContactRecord>, T.Contact>>,
  Assert<Fits<z.infer<typeof C.AudienceRecord>, T.Audience>>,
  Assert<Fits<z.infer<typeof C.BroadcastRecord>, T.Broadcast>>,
  Assert<Fits<z.infer<typeof C.AdminEmailSummaryRecord>, T.AdminEmailSummary>>,
  Assert<Fits<z.infer<typeof C.ProjectStatsRecord>, T.ProjectStats>>,
  // inputs
  Assert<Fits<T.CreateProjectInput, z.input<typeof C.CreateProjectBody>>>,
  Assert<Fits<T.UpdateProjectInput, z.input<typeof C.UpdateProjectBody>>>,
  Assert<Fits<T.CreateApiKeyInput, z.input<typeof C.CreateApiKeyBody>>>,
  Assert<Fits<T.CreateWebhookInput, z.input<typeof C.CreateWebhookBody>>>,
  Assert<Fits<T.UpdateWebhookInput, z.input<typeof C.UpdateWebhookBody>>>,
  Assert<Fits<T.AddSuppressionInput, z.input<typeof C.AddSuppressionBody>>>,
  Assert<Fits<T.SendEmailInput, z.input<typeof C.SendEmailInput>>>,
  Assert<Fits<T.AnalyticsQuery, z.input<typeof C.AnalyticsQuery>>>,
  Assert<Fits<T.TemplateInput, z.input<typeof C.CreateTemplateBody>>>,
  Assert<Fits<T.TemplateUpdate, z.input<typeof C.UpdateTemplateBody>>>,
  Assert<Fits<T.CreateContactInput, z.input<typeof C.CreateContactBody>>>,
  Assert<Fits<T.ContactUpdate, z.input<typeof C.UpdateContactBody>>>,
  Assert<Fits<T.BroadcastInput, z.input<typeof C.CreateBroadcastBody>>>,
  Assert<Fits<T.DevEventInput, z.input<typeof C.DevEventBody>>>,
  // Dates in queries are sent as ISO strings by the client.
  Assert<Fits<Omit<T.AdminListEmailsQuery, 'since' | 'until'>, z.input<typeof C.AdminListEmailsQuery>>>,
  Assert<Fits<Omit<T.EventsQuery, 'since' | 'until'>, z.input<typeof C.EventsQuery>>>,
]
