/**
 * The zod schemas of each SDK operation's route: its body, query, answer (one item of it for a
 * list) and list wrapper. operation-schemas.test.ts holds every entry to the route catalog (the
 * very schema objects `ROUTES` holds, and the wrapper the OpenAPI document gives), so this table
 * cannot drift from what the gateway serves; contract-types.ts holds each SDK method's types to
 * the entries at type-check time.
 */
import * as C from '@mailer/contracts'
import type { z } from 'zod'
import type { Operation } from '../src/endpoints.js'

export interface OperationSchemas {
  body?: z.ZodType
  query?: z.ZodType
  response: z.ZodType
  /** `all`: `{ data }`; `page`: `{ data, nextCursor }`; `response` is then one item. */
  list?: 'all' | 'page'
}

export const OPERATION_SCHEMAS = {
  me: { response: C.MeResponse },
  'apiKeys.list': { response: C.ApiKeyRecord, list: 'all' },
  // emails
  'emails.send': { body: C.SendEmailInput, query: C.SendQuery, response: C.SendResponse },
  // The documented body: the route's own is looser, its items checked one by one by the handler.
  'emails.sendBatch': { body: C.DocumentedBatchBody, query: C.BatchQuery, response: C.BatchResponse },
  'emails.list': { query: C.ListEmailsQuery, response: C.EmailSummaryRecord, list: 'page' },
  'emails.get': { response: C.EmailRecord },
  'emails.content': { response: C.EmailContentRecord },
  'emails.cancel': { response: C.CanceledEmail },
  // The documented body: the route's own takes scheduledAt as unknown, checked by the handler.
  'emails.reschedule': { body: C.DocumentedRescheduleBody, response: C.EmailRecord },
  'events.list': { query: C.EventsQuery, response: C.EventPayload, list: 'page' },
  'analytics.get': { query: C.AnalyticsQuery, response: C.AnalyticsResponse },
  'domains.list': { query: C.DomainsQuery, response: C.DomainRecord, list: 'all' },
  // webhooks
  'webhooks.create': { body: C.CreateWebhookBody, response: C.WebhookWithSecret },
  'webhooks.list': { response: C.WebhookRecord, list: 'all' },
  'webhooks.get': { response: C.WebhookRecord },
  'webhooks.update': { body: C.UpdateWebhookBody, response: C.WebhookRecord },
  'webhooks.delete': { response: C.DeletedWebhook },
  'webhooks.rotateSecret': { response: C.WebhookWithSecret },
  'webhooks.deliveries': { query: C.DeliveriesQuery, response: C.DeliveryRecord, list: 'page' },
  'webhooks.test': { response: C.TestDeliveryResponse },
  'webhooks.retryDelivery': { response: C.DeliveryRecord },
  // templates, contacts, audiences, broadcasts
  'templates.list': { query: C.ListTemplatesQuery, response: C.TemplateSummaryRecord, list: 'page' },
  'templates.create': { body: C.CreateTemplateBody, response: C.TemplateRecord },
  'templates.get': { response: C.TemplateRecord },
  'templates.update': { body: C.UpdateTemplateBody, response: C.TemplateRecord },
  'templates.delete': { response: C.DeletedTemplate },
  'templates.versions': {
    query: C.TemplateVersionsQuery,
    response: C.TemplateVersionRecord,
    list: 'page',
  },
  'templates.restore': { body: C.RestoreTemplateBody, response: C.TemplateRecord },
  'templates.render': { body: C.RenderTemplateBody, response: C.RenderedTemplateRecord },
  'contacts.list': { query: C.ContactsQuery, response: C.ContactRecord, list: 'page' },
  'contacts.create': { body: C.CreateContactBody, response: C.ContactRecord },
  'contacts.import': { body: C.ImportContactsBody, query: C.ImportContactsQuery, response: C.ImportResult },
  'contacts.get': { response: C.ContactRecord },
  'contacts.update': { body: C.UpdateContactBody, response: C.ContactRecord },
  'contacts.delete': { response: C.DeletedContact },
  'audiences.list': { query: C.AudiencesQuery, response: C.AudienceRecord, list: 'page' },
  'audiences.create': { body: C.CreateAudienceBody, response: C.AudienceRecord },
  'audiences.get': { response: C.AudienceRecord },
  'audiences.update': { body: C.UpdateAudienceBody, response: C.AudienceRecord },
  'audiences.delete': { response: C.DeletedAudience },
  'audiences.listContacts': { query: C.AudienceContactsQuery, response: C.ContactRecord, list: 'page' },
  'audiences.addContacts': { body: C.AudienceContactsBody, response: C.AddedContacts },
  'audiences.removeContacts': { body: C.AudienceContactsBody, response: C.RemovedContacts },
  'broadcasts.list': { query: C.BroadcastsQuery, response: C.BroadcastSummaryRecord, list: 'page' },
  'broadcasts.create': { body: C.CreateBroadcastBody, response: C.BroadcastRecord },
  'broadcasts.get': { response: C.BroadcastRecord },
  'broadcasts.update': { body: C.UpdateBroadcastBody, response: C.BroadcastRecord },
  'broadcasts.delete': { response: C.DeletedBroadcast },
  'broadcasts.send': { body: C.SendBroadcastBody, response: C.BroadcastRecord },
  'broadcasts.cancel': { response: C.BroadcastRecord },
  // admin key
  'admin.projects.create': { body: C.CreateProjectBody, response: C.ProjectRecord },
  'admin.projects.list': { response: C.ProjectRecord, list: 'all' },
  'admin.projects.get': { response: C.ProjectRecord },
  'admin.projects.update': { body: C.UpdateProjectBody, response: C.ProjectRecord },
  'admin.projects.disable': { response: C.ProjectRecord },
  'admin.apiKeys.create': { body: C.CreateApiKeyBody, response: C.CreatedApiKey },
  'admin.apiKeys.list': { query: C.AdminApiKeysQuery, response: C.ApiKeyRecord, list: 'all' },
  'admin.apiKeys.rename': { body: C.RenameApiKeyBody, response: C.ApiKeyRecord },
  'admin.apiKeys.revoke': { response: C.ApiKeyRecord },
  'admin.domains.list': { response: C.AdminDomainRecord, list: 'all' },
  'admin.domains.setup': { response: C.DomainRecord },
  'admin.suppressions.list': { query: C.SuppressionsQuery, response: C.SuppressionRecord, list: 'page' },
  'admin.suppressions.add': { body: C.AddSuppressionBody, response: C.SuppressionRecord },
  'admin.suppressions.remove': { response: C.RemovedSuppression },
  'admin.emails.list': {
    query: C.AdminListEmailsQuery,
    response: C.AdminEmailSummaryRecord,
    list: 'page',
  },
  'admin.emails.get': { response: C.AdminEmailRecord },
  'admin.emails.content': { response: C.EmailContentRecord },
  'admin.emails.resend': { response: C.SendResult },
  'admin.events.list': { query: C.AdminEventsQuery, response: C.AdminEventRecord, list: 'page' },
  'admin.analytics.get': { query: C.AdminAnalyticsQuery, response: C.AnalyticsResponse },
  'admin.stats': { response: C.ProjectStatsRecord, list: 'all' },
  'admin.dev.createEvent': { body: C.DevEventBody, response: C.EventPayload },
} as const satisfies Record<Operation, OperationSchemas>

export type OperationSchemaTable = typeof OPERATION_SCHEMAS
