import { decodeCursor, scannedPage } from '@mailer/contracts'
import { type Db, type Prisma, pastPlace, scanList } from '@mailer/db'
import { orderPayload } from '../domain/payload.js'

const ALL_MODES = ['live', 'test'] as const

export interface EventLogFilter {
  /** Undefined: every project (admin). */
  projectId?: string
  /** Each item says its project (the admin route, which spans projects). */
  withProject?: boolean
  modes: Array<'live' | 'test'>
  type?: string
  emailId?: string
  since?: string
  until?: string
  limit: number
  cursor?: string
}

/**
 * `GET /v1/events`: rows of `email_events`, newest first, keyset-paginated on (created_at, id);
 * each item is the stored payload, exactly what webhooks receive (and its `projectId` with
 * `withProject`). `since` is inclusive, `until` exclusive.
 *
 * `type` and `mode` have no index: they are checked on the rows read in the list's order, so a
 * type few events have would read the project's whole log. Such a list reads at most `scanRows`
 * rows past the cursor; a page not full by then is answered with a cursor from where the scan
 * stopped (docs/api.md, "Lists"). `emailId` reads only that email's events: not bounded.
 */
export async function listEvents(
  db: Db,
  f: EventLogFilter,
  scanRows: number,
): Promise<{ data: Record<string, unknown>[]; nextCursor: string | null }> {
  const cursor = decodeCursor(f.cursor, 'event')
  // What the (project_id, created_at, id) or (created_at, id) index reads in order.
  const scope: Prisma.EmailEventWhereInput[] = []
  if (f.projectId) scope.push({ projectId: f.projectId })
  if (f.since) scope.push({ createdAt: { gte: new Date(f.since) } })
  if (f.until) scope.push({ createdAt: { lt: new Date(f.until) } })
  if (cursor) scope.push(pastPlace(cursor))
  const filters: Prisma.EmailEventWhereInput[] = []
  if (!ALL_MODES.every((m) => f.modes.includes(m))) filters.push({ mode: { in: f.modes } })
  if (f.type) filters.push({ type: f.type })
  const orderBy: Prisma.EmailEventOrderByWithRelationInput[] = [{ createdAt: 'desc' }, { id: 'desc' }]
  const bounded = filters.length > 0 && !f.emailId
  if (f.emailId) filters.push({ emailId: f.emailId })
  const { rows, stop } = await scanList(scope, filters, bounded ? scanRows : null, {
    edge: (r) => db.emailEvent.findMany({ ...r, orderBy, select: { createdAt: true, id: true } }),
    rows: (where) =>
      db.emailEvent.findMany({
        where,
        orderBy,
        take: f.limit + 1,
        select: { id: true, createdAt: true, payload: true, projectId: true },
      }),
  })
  return scannedPage(
    rows,
    f.limit,
    (r) => (f.withProject ? { ...orderPayload(r.payload), projectId: r.projectId } : orderPayload(r.payload)),
    stop,
  )
}
