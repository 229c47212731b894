import { decodeCursor, page } from '@mailer/contracts'
import type { Db, Prisma } from '@mailer/db'
import { orderPayload } from '../domain/payload.js'

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
 */
export async function listEvents(
  db: Db,
  f: EventLogFilter,
): Promise<{ data: Record<string, unknown>[]; nextCursor: string | null }> {
  const cursor = decodeCursor(f.cursor, 'event')
  const and: Prisma.EmailEventWhereInput[] = [{ mode: { in: f.modes } }]
  if (f.projectId) and.push({ projectId: f.projectId })
  if (f.type) and.push({ type: f.type })
  if (f.emailId) and.push({ emailId: f.emailId })
  if (f.since) and.push({ createdAt: { gte: new Date(f.since) } })
  if (f.until) and.push({ createdAt: { lt: new Date(f.until) } })
  if (cursor) {
    and.push({
      OR: [{ createdAt: { lt: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { lt: cursor.id } }],
    })
  }
  const rows = await db.emailEvent.findMany({
    where: { AND: and },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: f.limit + 1,
    select: { id: true, createdAt: true, payload: true, projectId: true },
  })
  return page(rows, f.limit, (r) =>
    f.withProject ? { ...orderPayload(r.payload), projectId: r.projectId } : orderPayload(r.payload),
  )
}
