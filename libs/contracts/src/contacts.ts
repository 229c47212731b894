import { z } from 'zod'
import { ADDRESS_RE } from './emails.js'
import { pageQuery } from './pagination.js'
import { withoutProtoKey } from './proto-key.js'

/** Contacts imported or addressed at once (POST /v1/contacts/import, audience membership). */
export const MAX_CONTACT_IMPORT = 5000
/** Serialized `data` of one contact, at most (it is copied into every broadcast email's variables). */
export const MAX_CONTACT_DATA_BYTES = 16 * 1024

/** Contact addresses are stored and compared lower-cased, like suppressions and recipients. */
export const ContactEmail = z
  .string()
  .trim()
  .toLowerCase()
  // On the address as stored: spaces around one of valid length made it 400 before.
  .max(320, 'must be at most 320 characters')
  .refine((s) => ADDRESS_RE.test(s), 'must be an email address like a@b.c')

const personName = z.string().max(200).nullable()

/**
 * Free-form variables; the reserved names (`email`, `first_name`, ...) are set from the contact.
 * A top-level `__proto__` is refused by name: the record would leave it out unsaid, and a PATCH
 * of `{ "__proto__": … }` alone cleared the stored data.
 */
export const ContactData = withoutProtoKey(
  z
    .record(z.string().min(1).max(100), z.unknown())
    .refine((d) => Buffer.byteLength(JSON.stringify(d), 'utf8') <= MAX_CONTACT_DATA_BYTES, {
      message: `data must be at most ${MAX_CONTACT_DATA_BYTES} bytes as JSON`,
    }),
  'a data key',
)

/**
 * POST /v1/contacts and each import item: upserts by `email`. A field left out or null keeps the
 * stored value when the contact exists (the original system took `data: null` so; re-importing a
 * list with empty columns must not erase or re-subscribe anyone).
 */
export const ContactInput = z.strictObject({
  email: ContactEmail,
  firstName: personName.optional(),
  lastName: personName.optional(),
  unsubscribed: z.boolean().nullable().optional(),
  data: ContactData.nullable().optional(),
})
export type ContactInput = z.infer<typeof ContactInput>

/** POST /v1/contacts: a contact plus, beyond the contract, audiences to add it to. */
export const CreateContactBody = ContactInput.extend({
  audienceIds: z.array(z.string().min(1).max(100)).max(100).optional(),
})
export type CreateContactBody = z.infer<typeof CreateContactBody>

/** POST /v1/contacts/import: a JSON array of 1-5,000 contacts (like the email batch). */
export const ImportContactsBody = z
  .array(ContactInput)
  .min(1, 'the import needs at least one contact')
  .max(MAX_CONTACT_IMPORT, `an import holds at most ${MAX_CONTACT_IMPORT} contacts`)
export const ImportContactsQuery = z.object({ audienceId: z.string().min(1).max(100).optional() })
export const ImportResult = z.object({ created: z.number().int(), updated: z.number().int() })
export type ImportResult = z.infer<typeof ImportResult>

/**
 * PATCH /v1/contacts/:id: sets what it is given (null clears a name, and `data`, to `{}`). The
 * email is the contact's identity and cannot change.
 */
export const UpdateContactBody = z.strictObject({
  firstName: personName.optional(),
  lastName: personName.optional(),
  unsubscribed: z.boolean().optional(),
  data: ContactData.nullable().optional(),
})
export type UpdateContactBody = z.infer<typeof UpdateContactBody>

export const ContactsQuery = pageQuery().extend({
  /**
   * Case-insensitive substring of the email, first or last name; trimmed like the emails it
   * searches, and one left blank (a cleared search box) filters nothing.
   */
  q: z.string().trim().max(200).optional(),
  audienceId: z.string().min(1).max(100).optional(),
})
export type ContactsQuery = z.infer<typeof ContactsQuery>

export const ContactRecord = z.object({
  id: z.string(),
  email: z.string(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  unsubscribed: z.boolean(),
  data: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
  updatedAt: z.string(),
})
export type ContactRecord = z.infer<typeof ContactRecord>

export const DeletedContact = z.object({ id: z.string(), deleted: z.literal(true) })
