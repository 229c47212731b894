import { serveRoutes } from '@mailer/bus'
import {
  AudienceContactsBody,
  AudiencesQuery,
  ContactsQuery,
  CreateAudienceBody,
  page,
  parseBody,
  parseQuery,
  requireProject,
  UpdateAudienceBody,
} from '@mailer/contracts'
import type { BroadcastContext } from '../app.js'
import { toAudienceRecord, toContactRecord } from '../domain/records.js'
import {
  addMembers,
  createAudience,
  deleteAudience,
  findAudience,
  listAudiences,
  removeMembers,
  renameAudience,
  requireAudience,
} from '../infra/audience-store.js'
import { listContacts } from '../infra/contact-store.js'

const MembersQuery = ContactsQuery.omit({ audienceId: true })

/** Audiences and their members (contract.md part 5). */
export function serveAudiences({ rt }: BroadcastContext): void {
  const db = rt.db
  serveRoutes(rt.bus, 'broadcast', {
    'api.broadcast.audiences.create': async ({ caller, body }) => {
      const { name } = parseBody(CreateAudienceBody, body)
      return toAudienceRecord(await createAudience(db, requireProject(caller).id, name))
    },

    'api.broadcast.audiences.list': async ({ caller, query }) => {
      const q = parseQuery(AudiencesQuery, query)
      return page(await listAudiences(db, requireProject(caller).id, q), q.limit, toAudienceRecord)
    },

    'api.broadcast.audiences.get': async ({ caller, params }) =>
      toAudienceRecord(await findAudience(db, requireProject(caller).id, params.id ?? '')),

    'api.broadcast.audiences.update': async ({ caller, params, body }) => {
      const { name } = parseBody(UpdateAudienceBody, body)
      return toAudienceRecord(await renameAudience(db, requireProject(caller).id, params.id ?? '', name))
    },

    'api.broadcast.audiences.delete': async ({ caller, params }) => {
      const id = params.id ?? ''
      await deleteAudience(db, requireProject(caller).id, id)
      return { id, deleted: true as const }
    },

    'api.broadcast.audiences.contacts.list': async ({ caller, params, query }) => {
      const project = requireProject(caller)
      const q = parseQuery(MembersQuery, query)
      const audienceId = params.id ?? ''
      await requireAudience(db, project.id, audienceId)
      return page(await listContacts(db, project.id, { ...q, audienceId }), q.limit, toContactRecord)
    },

    'api.broadcast.audiences.contacts.add': async ({ caller, params, body }) => {
      const project = requireProject(caller)
      const { contactIds } = parseBody(AudienceContactsBody, body)
      // One transaction: the audience and the contacts stay locked against deletion until the
      // members are in (audience-store.ts).
      const added = await db.$transaction(async (tx) => {
        await requireAudience(tx, project.id, params.id ?? '')
        return addMembers(tx, project.id, params.id ?? '', contactIds)
      })
      return { added }
    },

    'api.broadcast.audiences.contacts.remove': async ({ caller, params, body }) => {
      const project = requireProject(caller)
      const { contactIds } = parseBody(AudienceContactsBody, body)
      await requireAudience(db, project.id, params.id ?? '')
      return { removed: await removeMembers(db, params.id ?? '', contactIds) }
    },
  })
}
