/**
 * Every REST route the client calls, by operation name. Resource methods go through this table
 * only, and a test holds it against the service's route catalog (`ROUTES` in @mailer/contracts):
 * each catalog route has an entry here and each entry is either served or listed in
 * `PENDING_ENDPOINTS` below. Project routes (`/v1/...` without `admin`) are also reached on the
 * admin mirror, `/v1/admin/projects/:slug/...`, by `AdminClient.project(slug)`.
 */
export const ENDPOINTS = {
  // identity (project key only: no admin mirror)
  me: ['GET', '/v1/me'],
  'apiKeys.list': ['GET', '/v1/api-keys'],
  // emails
  'emails.send': ['POST', '/v1/emails'],
  'emails.sendBatch': ['POST', '/v1/emails/batch'],
  'emails.list': ['GET', '/v1/emails'],
  'emails.get': ['GET', '/v1/emails/:id'],
  'emails.content': ['GET', '/v1/emails/:id/content'],
  'emails.cancel': ['DELETE', '/v1/emails/:id'],
  'emails.reschedule': ['PATCH', '/v1/emails/:id'],
  'events.list': ['GET', '/v1/events'],
  'analytics.get': ['GET', '/v1/analytics'],
  'domains.list': ['GET', '/v1/domains'],
  // webhooks
  'webhooks.create': ['POST', '/v1/webhooks'],
  'webhooks.list': ['GET', '/v1/webhooks'],
  'webhooks.get': ['GET', '/v1/webhooks/:id'],
  'webhooks.update': ['PATCH', '/v1/webhooks/:id'],
  'webhooks.delete': ['DELETE', '/v1/webhooks/:id'],
  'webhooks.rotateSecret': ['POST', '/v1/webhooks/:id/rotate-secret'],
  'webhooks.deliveries': ['GET', '/v1/webhooks/:id/deliveries'],
  'webhooks.test': ['POST', '/v1/webhooks/:id/test'],
  'webhooks.retryDelivery': ['POST', '/v1/webhooks/:id/deliveries/:deliveryId/retry'],
  // templates, contacts, audiences, broadcasts (contract.md part 5)
  'templates.list': ['GET', '/v1/templates'],
  'templates.create': ['POST', '/v1/templates'],
  'templates.get': ['GET', '/v1/templates/:name'],
  'templates.update': ['PATCH', '/v1/templates/:name'],
  'templates.delete': ['DELETE', '/v1/templates/:name'],
  'templates.versions': ['GET', '/v1/templates/:name/versions'],
  'templates.restore': ['POST', '/v1/templates/:name/restore'],
  'templates.render': ['POST', '/v1/templates/:name/render'],
  'contacts.list': ['GET', '/v1/contacts'],
  'contacts.create': ['POST', '/v1/contacts'],
  'contacts.import': ['POST', '/v1/contacts/import'],
  'contacts.get': ['GET', '/v1/contacts/:id'],
  'contacts.update': ['PATCH', '/v1/contacts/:id'],
  'contacts.delete': ['DELETE', '/v1/contacts/:id'],
  'audiences.list': ['GET', '/v1/audiences'],
  'audiences.create': ['POST', '/v1/audiences'],
  'audiences.get': ['GET', '/v1/audiences/:id'],
  'audiences.update': ['PATCH', '/v1/audiences/:id'],
  'audiences.delete': ['DELETE', '/v1/audiences/:id'],
  'audiences.listContacts': ['GET', '/v1/audiences/:id/contacts'],
  'audiences.addContacts': ['POST', '/v1/audiences/:id/contacts'],
  'audiences.removeContacts': ['DELETE', '/v1/audiences/:id/contacts'],
  'broadcasts.list': ['GET', '/v1/broadcasts'],
  'broadcasts.create': ['POST', '/v1/broadcasts'],
  'broadcasts.get': ['GET', '/v1/broadcasts/:id'],
  'broadcasts.update': ['PATCH', '/v1/broadcasts/:id'],
  'broadcasts.delete': ['DELETE', '/v1/broadcasts/:id'],
  'broadcasts.send': ['POST', '/v1/broadcasts/:id/send'],
  'broadcasts.cancel': ['POST', '/v1/broadcasts/:id/cancel'],
  // admin key
  'admin.projects.create': ['POST', '/v1/admin/projects'],
  'admin.projects.list': ['GET', '/v1/admin/projects'],
  'admin.projects.get': ['GET', '/v1/admin/projects/:slug'],
  'admin.projects.update': ['PATCH', '/v1/admin/projects/:slug'],
  'admin.projects.disable': ['DELETE', '/v1/admin/projects/:slug'],
  'admin.apiKeys.create': ['POST', '/v1/admin/projects/:slug/api-keys'],
  'admin.apiKeys.list': ['GET', '/v1/admin/api-keys'],
  'admin.apiKeys.rename': ['PATCH', '/v1/admin/api-keys/:id'],
  'admin.apiKeys.revoke': ['DELETE', '/v1/admin/api-keys/:id'],
  'admin.domains.list': ['GET', '/v1/admin/domains'],
  'admin.domains.setup': ['POST', '/v1/admin/projects/:slug/domains/:domain/setup'],
  'admin.suppressions.list': ['GET', '/v1/admin/suppressions'],
  'admin.suppressions.add': ['POST', '/v1/admin/suppressions'],
  'admin.suppressions.remove': ['DELETE', '/v1/admin/suppressions/:address'],
  'admin.emails.list': ['GET', '/v1/admin/emails'],
  'admin.emails.get': ['GET', '/v1/admin/emails/:id'],
  'admin.emails.content': ['GET', '/v1/admin/emails/:id/content'],
  'admin.emails.resend': ['POST', '/v1/admin/emails/:id/resend'],
  'admin.events.list': ['GET', '/v1/admin/events'],
  'admin.analytics.get': ['GET', '/v1/admin/analytics'],
  'admin.stats': ['GET', '/v1/admin/stats'],
  'admin.dev.createEvent': ['POST', '/v1/admin/dev/events'],
} as const satisfies Record<string, readonly [string, string]>

export type Operation = keyof typeof ENDPOINTS

/**
 * The operations whose routes read `Idempotency-Key` (the sends: the catalog route forwards the
 * header). Only these are made safe to repeat by a key; on any other write the service never
 * sees it, so a key there must not make the client retry a 503 (the write may have been
 * applied). The catalog test holds this list to the routes that forward the header.
 */
export const KEYED_OPERATIONS: readonly Operation[] = ['emails.send', 'emails.sendBatch']

/**
 * Operations documented by the contract whose routes are not in the catalog yet: they call the
 * documented path, and the catalog test allows an operation outside the catalog only when it
 * is listed here. Empty: every operation is served.
 */
export const PENDING_ENDPOINTS: readonly Operation[] = []

/**
 * A path segment as the URL carries it. `.` and `..` cannot be sent: a URL resolves them away
 * (`%2E%2E` too), so `/v1/admin/projects/../emails/<id>` would reach the admin route that reads
 * any project's email. No slug, id, name or address is either, so they fail here.
 */
export function pathSegment(name: string, value: string | undefined): string {
  if (value === undefined || value === '') throw new TypeError(`${name} is required`)
  if (value === '.' || value === '..') throw new TypeError(`${name} cannot be '${value}'`)
  return encodeURIComponent(value)
}

/** Fills `:name` placeholders, each value URL-encoded. */
export function fillPath(template: string, params: Record<string, string> = {}): string {
  return template.replace(/:([A-Za-z]+)/g, (_, name: string) => pathSegment(name, params[name]))
}
