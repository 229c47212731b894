import { serveRoutes } from '@mailer/bus'
import {
  ContactsQuery,
  CreateContactBody,
  ImportContactsBody,
  ImportContactsQuery,
  MailerError,
  page,
  parseBody,
  parseQuery,
  requireProject,
  UpdateContactBody,
} from '@mailer/contracts'
import type { BroadcastContext } from '../app.js'
import { mergeByEmail } from '../domain/contact-merge.js'
import { toContactRecord } from '../domain/records.js'
import { insertMembers, requireAudience } from '../infra/audience-store.js'
import {
  deleteContact,
  findContact,
  listContacts,
  updateContact,
  upsertContacts,
} from '../infra/contact-store.js'

/** Contacts (contract.md part 5): upsert by email, bulk import, read, change, delete. */
export function serveContacts({ rt }: BroadcastContext): void {
  const db = rt.db
  serveRoutes(rt.bus, 'broadcast', {
    'api.broadcast.contacts.create': async ({ caller, body }) => {
      const project = requireProject(caller)
      const { audienceIds = [], ...input } = parseBody(CreateContactBody, body)
      const row = await db.$transaction(async (tx) => {
        for (const [i, id] of audienceIds.entries())
          await requireAudience(tx, project.id, id, `audienceIds.${i}`)
        const { created, updated } = await upsertContacts(tx, project.id, [input])
        const contact = created[0] ?? updated[0]
        // Deleted again between every round of the upsert: a retry will find it settled.
        if (!contact) throw new MailerError('service_unavailable', 'The contact changed concurrently; retry')
        for (const id of new Set(audienceIds)) await insertMembers(tx, id, [contact.id])
        return contact
      })
      return toContactRecord(row)
    },

    'api.broadcast.contacts.import': async ({ caller, body, query }) => {
      const project = requireProject(caller)
      const { audienceId } = parseQuery(ImportContactsQuery, query)
      const inputs = mergeByEmail(parseBody(ImportContactsBody, body))
      // One transaction: an import is applied whole or not at all.
      return db.$transaction(
        async (tx) => {
          if (audienceId !== undefined) await requireAudience(tx, project.id, audienceId, 'audienceId')
          const { created, updated } = await upsertContacts(tx, project.id, inputs)
          if (audienceId !== undefined) {
            await insertMembers(
              tx,
              audienceId,
              [...created, ...updated].map((c) => c.id),
            )
          }
          return { created: created.length, updated: updated.length }
        },
        { timeout: 60_000 },
      )
    },

    'api.broadcast.contacts.list': async ({ caller, query }) => {
      const project = requireProject(caller)
      const q = parseQuery(ContactsQuery, query)
      if (q.audienceId !== undefined) await requireAudience(db, project.id, q.audienceId, 'audienceId')
      return page(await listContacts(db, project.id, q), q.limit, toContactRecord)
    },

    'api.broadcast.contacts.get': async ({ caller, params }) =>
      toContactRecord(await findContact(db, requireProject(caller).id, params.id ?? '')),

    'api.broadcast.contacts.update': async ({ caller, params, body }) => {
      const patch = parseBody(UpdateContactBody, body)
      return toContactRecord(await updateContact(db, requireProject(caller).id, params.id ?? '', patch))
    },

    'api.broadcast.contacts.delete': async ({ caller, params }) => {
      const id = params.id ?? ''
      await deleteContact(db, requireProject(caller).id, id)
      return { id, deleted: true as const }
    },
  })
}
