import type { Bus } from '@mailer/bus'
import { serveRoutes } from '@mailer/bus'
import {
  AdminEventsQuery,
  type Caller,
  EventsQuery,
  isMailerError,
  MailerError,
  noSuch,
  parseQuery,
  ResolveProjectResponse,
  requireProject,
  SLUG_RE,
  SUBJECTS,
} from '@mailer/contracts'
import type { Db } from '@mailer/db'
import { listEvents } from '../infra/event-log.js'

/**
 * Live callers (live keys, the admin mirror, admin) see live events only; a test key also sees
 * its project's test-mode events (docs/api.md, "Events").
 */
export const modesFor = (caller: Caller): Array<'live' | 'test'> =>
  caller.via === 'api' && caller.mode === 'test' ? ['live', 'test'] : ['live']

const filterOf = (q: EventsQuery) => ({
  limit: q.limit,
  ...(q.cursor ? { cursor: q.cursor } : {}),
  ...(q.type ? { type: q.type } : {}),
  ...(q.emailId ? { emailId: q.emailId } : {}),
  ...(q.since ? { since: q.since } : {}),
  ...(q.until ? { until: q.until } : {}),
})

/** The event log: `GET /v1/events` (and its admin mirror) and `GET /v1/admin/events`. */
export function serveEvents(bus: Bus, db: Db, queue: string, scanRows: number): void {
  serveRoutes(bus, queue, {
    'api.webhook.events.list': async ({ caller, query }) => {
      const project = requireProject(caller)
      const q = parseQuery(EventsQuery, query)
      return listEvents(db, { ...filterOf(q), projectId: project.id, modes: modesFor(caller) }, scanRows)
    },

    'api.webhook.events.admin-list': async ({ query }) => {
      const q = parseQuery(AdminEventsQuery, query)
      let projectId: string | undefined
      if (q.project) {
        try {
          const p = await bus.request(
            SUBJECTS.authResolveProject,
            { slug: q.project },
            { schema: ResolveProjectResponse },
          )
          projectId = p.id
        } catch (e) {
          if (isMailerError(e) && e.code === 'project_not_found') {
            throw new MailerError('project_not_found', noSuch('project', 'slug', q.project, SLUG_RE), {
              param: 'project',
            })
          }
          throw e
        }
      }
      return listEvents(
        db,
        {
          ...filterOf(q),
          ...(projectId ? { projectId } : {}),
          modes: ['live'],
          withProject: true,
        },
        scanRows,
      )
    },
  })
}
