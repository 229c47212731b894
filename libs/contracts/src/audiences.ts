import { z } from 'zod'
import { ContactsQuery, MAX_CONTACT_IMPORT } from './contacts.js'
import { displayName } from './names.js'
import { pageQuery } from './pagination.js'

const audienceName = displayName()

export const CreateAudienceBody = z.strictObject({ name: audienceName })
export type CreateAudienceBody = z.infer<typeof CreateAudienceBody>

export const UpdateAudienceBody = z.strictObject({ name: audienceName.optional() })
export type UpdateAudienceBody = z.infer<typeof UpdateAudienceBody>

export const AudiencesQuery = pageQuery()

/** GET /v1/audiences/:id/contacts: the contact list's query, the audience being in the path. */
export const AudienceContactsQuery = ContactsQuery.omit({ audienceId: true })

export const AudienceRecord = z.object({
  id: z.string(),
  name: z.string(),
  /** Contacts in the audience, unsubscribed ones included. */
  contactCount: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
})
export type AudienceRecord = z.infer<typeof AudienceRecord>

export const DeletedAudience = z.object({ id: z.string(), deleted: z.literal(true) })

/** POST and DELETE /v1/audiences/:id/contacts. */
export const AudienceContactsBody = z.strictObject({
  contactIds: z
    .array(z.string().min(1).max(100))
    .min(1, 'contactIds needs at least one contact id')
    .max(MAX_CONTACT_IMPORT, `at most ${MAX_CONTACT_IMPORT} contact ids at once`),
})
export type AudienceContactsBody = z.infer<typeof AudienceContactsBody>

export const AddedContacts = z.object({ added: z.number().int() })
export const RemovedContacts = z.object({ removed: z.number().int() })
