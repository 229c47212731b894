import {
  AddSuppressionBody,
  RemovedSuppression,
  SuppressionRecord,
  SuppressionsQuery,
} from '../suppressions.js'
import { route } from './define.js'

/** The deployment-wide suppression list (contract.md part 2), owned by the email service. */
export const suppressionRoutes = [
  route({
    method: 'GET',
    path: '/v1/admin/suppressions',
    subject: 'api.email.suppressions.list',
    auth: 'admin',
    summary: 'List suppressed addresses, newest first; q filters by substring',
    query: SuppressionsQuery,
    response: SuppressionRecord,
  }),
  route({
    method: 'POST',
    path: '/v1/admin/suppressions',
    subject: 'api.email.suppressions.add',
    auth: 'admin',
    status: 201,
    summary: 'Suppress an address (an existing entry is returned, upgraded to a stronger reason)',
    body: AddSuppressionBody,
    response: SuppressionRecord,
  }),
  route({
    method: 'DELETE',
    path: '/v1/admin/suppressions/:address',
    subject: 'api.email.suppressions.remove',
    auth: 'admin',
    summary: 'Remove an address from the list',
    response: RemovedSuppression,
  }),
]
