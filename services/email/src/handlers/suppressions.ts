import { type Runtime, serveRoutes } from '@mailer/bus'
import {
  AddSuppressionBody,
  normalizeAddress,
  parseBody,
  parseQuery,
  SuppressionsQuery,
} from '@mailer/contracts'
import {
  decodeSuppressionCursor,
  encodeSuppressionCursor,
  SuppressionStore,
  toSuppressionRecord,
} from '../infra/suppression-store.js'

const QUEUE = 'email'

/**
 * The admin suppression list (contract.md part 2): one list for the whole deployment, since an
 * address that hard-bounced hurts every project's reputation.
 */
export function serveSuppressions(rt: Runtime): void {
  const store = new SuppressionStore(rt.db)
  const changes = rt.metrics.counter(
    'suppression_changes_total',
    'Suppression list changes made through the admin API',
    ['action'],
  )

  serveRoutes(rt.bus, QUEUE, {
    'api.email.suppressions.list': async ({ query }) => {
      const { q, limit, cursor } = parseQuery(SuppressionsQuery, query)
      const rows = await store.list({
        q,
        limit,
        after: cursor === undefined ? undefined : decodeSuppressionCursor(cursor),
      })
      const more = rows.length > limit
      const data = more ? rows.slice(0, limit) : rows
      const last = data[data.length - 1]
      return {
        data: data.map(toSuppressionRecord),
        nextCursor: more && last ? encodeSuppressionCursor(last) : null,
      }
    },

    'api.email.suppressions.add': async ({ caller, body }) => {
      const input = parseBody(AddSuppressionBody, body)
      const { row, changed } = await store.add(input.address, input.reason, null)
      if (changed) {
        changes.inc({ action: 'added' })
        rt.logger.info({ requestId: caller.requestId, reason: row.reason }, 'suppression added or upgraded')
      }
      return toSuppressionRecord(row)
    },

    'api.email.suppressions.remove': async ({ caller, params }) => {
      const address = normalizeAddress(params.address ?? '')
      const deleted = await store.remove(address)
      if (deleted) {
        changes.inc({ action: 'removed' })
        rt.logger.info({ requestId: caller.requestId }, 'suppression removed')
      }
      return { address, deleted }
    },
  })
}
