import { fail, noSuch } from '@mailer/contracts'
import type { Db } from '@mailer/db'

type Sql = Pick<Db, '$queryRawUnsafe' | '$executeRawUnsafe'>

/**
 * An address's hash as the tombstones keep it: a deleted contact leaves no address behind, only
 * enough to recognise the address when it comes back. Addresses are stored lower-cased.
 */
export const EMAIL_HASH_SQL = (column: string) => `sha256(convert_to(${column}, 'UTF8'))`

/**
 * The `unsubscribed` a contact created now starts with when its request does not say: what the
 * last deleted contact of that address had (SQL over `$1` the project id and `email` the
 * address column), so an address that unsubscribed and was deleted and imported again is not
 * mailed again; false for an address never deleted.
 */
export const INHERITED_UNSUBSCRIBED_SQL = (email: string) =>
  `COALESCE((SELECT t.unsubscribed FROM contact_tombstones t
             WHERE t.project_id = $1 AND t.email_hash = ${EMAIL_HASH_SQL(email)}
             ORDER BY t.deleted_at DESC LIMIT 1), false)`

/**
 * Deletes a contact, leaving its tombstone (one statement: the tombstone is there exactly when
 * the contact is gone). Returns whether there was such a contact.
 */
export async function deleteContactRow(tx: Sql, projectId: string, id: string): Promise<boolean> {
  const n = await tx.$executeRawUnsafe(
    `WITH gone AS (DELETE FROM contacts WHERE project_id = $1 AND id = $2
                   RETURNING id, project_id, email, unsubscribed)
     INSERT INTO contact_tombstones (contact_id, project_id, email_hash, unsubscribed)
     SELECT id, project_id, ${EMAIL_HASH_SQL('email')}, unsubscribed FROM gone`,
    projectId,
    id,
  )
  return n > 0
}

/**
 * The one-click unsubscribe (`contacts.unsubscribe`); repeating it is harmless. A link names its
 * contact by id; when that contact was deleted, every tombstone of its address says unsubscribed
 * from now on (a contact created later starts as the newest one says), and the contact holding
 * the address now, if any, is unsubscribed: the reader clicked a link of an older email after the
 * list was deleted and imported again. That last step reads the project's contacts (no index by
 * hash: every import would pay for one), so it runs on the link's first use only; a click again
 * finds nothing more to do.
 */
export async function unsubscribeContact(db: Sql, projectId: string, id: string): Promise<void> {
  const n = await db.$executeRawUnsafe(
    `UPDATE contacts SET unsubscribed = true, updated_at = CASE WHEN unsubscribed THEN updated_at ELSE now() END
     WHERE project_id = $1 AND id = $2`,
    projectId,
    id,
  )
  if (n > 0) return
  const [tomb] = await db.$queryRawUnsafe<Array<{ hash: Buffer; used: boolean }>>(
    `WITH mine AS (
       SELECT email_hash, link_used_at IS NOT NULL AS used FROM contact_tombstones
       WHERE project_id = $1 AND contact_id = $2
     ), marked AS (
       UPDATE contact_tombstones t
       SET unsubscribed = true,
           link_used_at = CASE WHEN t.contact_id = $2 THEN coalesce(t.link_used_at, now()) ELSE t.link_used_at END
       FROM mine WHERE t.project_id = $1 AND t.email_hash = mine.email_hash
     )
     SELECT email_hash AS hash, used FROM mine`,
    projectId,
    id,
  )
  if (!tomb) throw fail('contact_not_found', noSuch('contact', 'id', id, 'contact'), 'id')
  if (tomb.used) return
  await db.$executeRawUnsafe(
    `UPDATE contacts SET unsubscribed = true, updated_at = now()
     WHERE project_id = $1 AND NOT unsubscribed AND ${EMAIL_HASH_SQL('email')} = $2`,
    projectId,
    tomb.hash,
  )
}
