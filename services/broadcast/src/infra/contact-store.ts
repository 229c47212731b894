import {
  type ContactInput,
  type ContactsQuery,
  decodeCursor,
  fail,
  newId,
  noSuch,
  type UpdateContactBody,
} from '@mailer/contracts'
import { type Db, likeLiteral, type Prisma } from '@mailer/db'
import type { ContactRow } from '../domain/records.js'
import { deleteContactRow, INHERITED_UNSUBSCRIBED_SQL } from './contact-tombstones.js'

type Sql = Pick<Db, '$queryRawUnsafe' | '$executeRawUnsafe'>

/** Columns of `contacts c` as ContactRow. */
export const CONTACT_COLUMNS = `c.id, c.email, c.first_name AS "firstName", c.last_name AS "lastName",
  c.unsubscribed, c.data, c.created_at AS "createdAt", c.updated_at AS "updatedAt"`

/** An input row for jsonb_to_recordset: absent fields are NULL and keep the stored value. */
const wireRow = (c: ContactInput) => ({
  id: newId('contact'),
  email: c.email,
  first_name: c.firstName ?? null,
  last_name: c.lastName ?? null,
  unsubscribed: c.unsubscribed ?? null,
  data: c.data ?? null,
})

const RECORDSET = `jsonb_to_recordset($2::jsonb)
  AS i(id text, email text, first_name text, last_name text, unsubscribed boolean, data jsonb)`

export interface UpsertResult {
  created: ContactRow[]
  updated: ContactRow[]
}

/**
 * Upserts contacts by email with two multi-row statements in the caller's transaction: insert
 * the new ones (ON CONFLICT DO NOTHING), then update the rest. A field given as null or left out
 * keeps the stored value; a new contact's `unsubscribed` left out is what the last deleted
 * contact of its address had (contact-tombstones.ts), else false. A contact inserted concurrently
 * by another request is updated by the second statement, which sees it once that request
 * committed; one deleted concurrently between the two statements is inserted again by another
 * round. Inputs must be unique by email.
 * Both statements take their rows in email order, so imports naming the same contacts in other
 * orders wait for each other instead of deadlocking (PostgreSQL failed one of them: a 500).
 */
export async function upsertContacts(
  tx: Sql,
  projectId: string,
  inputs: readonly ContactInput[],
): Promise<UpsertResult> {
  const out: UpsertResult = { created: [], updated: [] }
  let pending = inputs
  for (let round = 0; round < 3 && pending.length > 0; round++) {
    const { created, updated } = await upsertRound(tx, projectId, pending)
    out.created.push(...created)
    out.updated.push(...updated)
    if (created.length + updated.length === pending.length) break
    const done = new Set([...created, ...updated].map((c) => c.email))
    pending = pending.filter((i) => !done.has(i.email))
  }
  return out
}

async function upsertRound(
  tx: Sql,
  projectId: string,
  inputs: readonly ContactInput[],
): Promise<UpsertResult> {
  const json = JSON.stringify(inputs.map(wireRow))
  const created = await tx.$queryRawUnsafe<ContactRow[]>(
    `INSERT INTO contacts AS c (id, project_id, email, first_name, last_name, unsubscribed, data, created_at, updated_at)
     SELECT i.id, $1, i.email, i.first_name, i.last_name,
            COALESCE(i.unsubscribed, ${INHERITED_UNSUBSCRIBED_SQL('i.email')}),
            COALESCE(i.data, '{}'::jsonb), now(), now()
     FROM ${RECORDSET}
     ORDER BY i.email
     ON CONFLICT (project_id, email) DO NOTHING
     RETURNING ${CONTACT_COLUMNS}`,
    projectId,
    json,
  )
  if (created.length === inputs.length) return { created, updated: [] }
  const updated = await tx.$queryRawUnsafe<ContactRow[]>(
    `WITH given AS MATERIALIZED (
       SELECT c.id AS contact_id, i.first_name, i.last_name, i.unsubscribed, i.data
       FROM contacts c JOIN ${RECORDSET} ON c.email = i.email
       WHERE c.project_id = $1 AND NOT (c.id = ANY($3::text[]))
       ORDER BY c.email FOR NO KEY UPDATE OF c)
     UPDATE contacts c SET
       first_name = COALESCE(g.first_name, c.first_name),
       last_name = COALESCE(g.last_name, c.last_name),
       unsubscribed = COALESCE(g.unsubscribed, c.unsubscribed),
       data = COALESCE(g.data, c.data),
       updated_at = now()
     FROM given g WHERE c.id = g.contact_id
     RETURNING ${CONTACT_COLUMNS}`,
    projectId,
    json,
    created.map((c) => c.id),
  )
  return { created, updated }
}

export async function findContact(db: Sql, projectId: string, id: string): Promise<ContactRow> {
  const [row] = await db.$queryRawUnsafe<ContactRow[]>(
    `SELECT ${CONTACT_COLUMNS} FROM contacts c WHERE c.project_id = $1 AND c.id = $2`,
    projectId,
    id,
  )
  if (!row) throw fail('contact_not_found', noSuch('contact', 'id', id, 'contact'), 'id')
  return row
}

/** Newest first, keyset on (created_at, id); `audienceId` limits to the audience's members. */
export async function listContacts(
  db: Sql,
  projectId: string,
  q: Omit<ContactsQuery, 'audienceId'> & { audienceId?: string | undefined },
): Promise<ContactRow[]> {
  const params: unknown[] = [projectId, q.limit + 1]
  const where = ['c.project_id = $1']
  let join = ''
  if (q.audienceId !== undefined) {
    params.push(q.audienceId)
    join = `JOIN audience_members m ON m.contact_id = c.id AND m.audience_id = $${params.length}`
  }
  if (q.q) {
    params.push(`%${likeLiteral(q.q)}%`)
    const p = `$${params.length}`
    where.push(`(c.email ILIKE ${p} OR c.first_name ILIKE ${p} OR c.last_name ILIKE ${p})`)
  }
  const cursor = decodeCursor(q.cursor, 'contact')
  if (cursor) {
    params.push(cursor.createdAt, cursor.id)
    where.push(`(c.created_at, c.id) < ($${params.length - 1}::timestamptz, $${params.length})`)
  }
  return db.$queryRawUnsafe<ContactRow[]>(
    `SELECT ${CONTACT_COLUMNS} FROM contacts c ${join}
     WHERE ${where.join(' AND ')}
     ORDER BY c.created_at DESC, c.id DESC LIMIT $2`,
    ...params,
  )
}

export async function updateContact(
  db: Sql,
  projectId: string,
  id: string,
  patch: UpdateContactBody,
): Promise<ContactRow> {
  const sets: string[] = ['updated_at = now()']
  const params: unknown[] = [projectId, id]
  const set = (column: string, value: unknown, cast = '') => {
    params.push(value)
    sets.push(`${column} = $${params.length}${cast}`)
  }
  if (patch.firstName !== undefined) set('first_name', patch.firstName)
  if (patch.lastName !== undefined) set('last_name', patch.lastName)
  if (patch.unsubscribed !== undefined) set('unsubscribed', patch.unsubscribed)
  if (patch.data !== undefined) set('data', JSON.stringify(patch.data ?? {}), '::jsonb')
  const [row] = await db.$queryRawUnsafe<ContactRow[]>(
    `UPDATE contacts c SET ${sets.join(', ')} WHERE c.project_id = $1 AND c.id = $2 RETURNING ${CONTACT_COLUMNS}`,
    ...params,
  )
  if (!row) throw fail('contact_not_found', noSuch('contact', 'id', id, 'contact'), 'id')
  return row
}

/** Deletes a contact (leaving its tombstone: contact-tombstones.ts) and its audience memberships. */
export async function deleteContact(db: Db, projectId: string, id: string): Promise<void> {
  await db.$transaction(async (tx: Prisma.TransactionClient) => {
    if (!(await deleteContactRow(tx, projectId, id)))
      throw fail('contact_not_found', noSuch('contact', 'id', id, 'contact'), 'id')
    // After the contact: its delete waited for transactions adding it to audiences (addMembers'
    // lock), and this statement sees the members they committed.
    await tx.$executeRawUnsafe('DELETE FROM audience_members WHERE contact_id = $1', id)
  })
}
