import { AdminDomainRecord, DomainRecord, DomainsQuery } from '../domains.js'
import { route } from './define.js'

/** Domain routes owned by the email service (interface.md "Admin routes", contract.md part 5). */
export const domainRoutes = [
  route({
    method: 'GET',
    path: '/v1/domains',
    subject: 'api.email.domains.list',
    auth: 'project',
    mirror: true,
    list: 'all',
    summary: "List the project's sending domains ({ data }); ?refresh=1 re-checks DNS first",
    query: DomainsQuery,
    response: DomainRecord,
  }),
  route({
    method: 'GET',
    path: '/v1/admin/domains',
    subject: 'api.email.domains.list-all',
    auth: 'admin',
    list: 'all',
    summary: 'Every domain with its project',
    response: AdminDomainRecord,
  }),
  route({
    method: 'POST',
    path: '/v1/admin/projects/:slug/domains/:domain/setup',
    subject: 'api.email.domains.setup',
    auth: 'admin',
    adminOnly: true,
    summary:
      'Create the domain for the project (or return it), with its DKIM key and the DNS records to publish',
    response: DomainRecord,
  }),
]
