import { decodeCursor, fail, newId, noSuch } from '@mailer/contracts'
import { type Db, Prisma } from '@mailer/db'
import { OPEN_STATUSES } from '../domain/broadcast-state.js'
import type { AudienceRow } from '../domain/records.js'

type Sql = Pick<Db, '$queryRawUnsafe' | '$executeRawUnsafe'>

const AUDIENCE_COLUMNS = `a.id, a.name, a.created_at AS "createdAt", a.updated_at AS "updatedAt",
  (SELECT count(*)::int FROM audience_members m WHERE m.audience_id = a.id) AS "contactCount"`

const isUniqueViolation = (e: unknown) =>
  (e instanceof Prisma.PrismaClientKnownRequestError && e.code === 'P2002') ||
  /23505|unique/i.test(String((e as Error)?.message))

const exists = (name: string) => fail('audience_exists', `An audience named '${name}' already exists`, 'name')
/** `param`: the path's `id`, or the body or query field that named the audience. */
export const audienceNotFound = (id: string, param = 'id') =>
  fail('audience_not_found', noSuch('audience', 'id', id, 'audience'), param)

export async function createAudience(db: Sql, projectId: string, name: string): Promise<AudienceRow> {
  try {
    const [row] = await db.$queryRawUnsafe<AudienceRow[]>(
      `INSERT INTO audiences AS a (id, project_id, name, created_at, updated_at)
       VALUES ($1, $2, $3, now(), now()) RETURNING ${AUDIENCE_COLUMNS}`,
      newId('audience'),
      projectId,
      name,
    )
    return row!
  } catch (e) {
    if (isUniqueViolation(e)) throw exists(name)
    throw e
  }
}

export async function findAudience(
  db: Sql,
  projectId: string,
  id: string,
  param?: string,
): Promise<AudienceRow> {
  const [row] = await db.$queryRawUnsafe<AudienceRow[]>(
    `SELECT ${AUDIENCE_COLUMNS} FROM audiences a WHERE a.project_id = $1 AND a.id = $2`,
    projectId,
    id,
  )
  if (!row) throw audienceNotFound(id, param)
  return row
}

/** Throws 404 `audience_not_found` (with `param`) unless the project has this audience. */
/**
 * 404 `audience_not_found` unless the audience exists. In a transaction, it then stays locked
 * against deletion (FOR KEY SHARE) until the commit, so members added in it never outlive it.
 */
export async function requireAudience(db: Sql, projectId: string, id: string, param?: string): Promise<void> {
  const rows = await db.$queryRawUnsafe<unknown[]>(
    'SELECT 1 FROM audiences WHERE project_id = $1 AND id = $2 FOR KEY SHARE',
    projectId,
    id,
  )
  if (rows.length === 0) throw audienceNotFound(id, param)
}

export async function listAudiences(
  db: Sql,
  projectId: string,
  q: { limit: number; cursor?: string | undefined },
): Promise<AudienceRow[]> {
  const cursor = decodeCursor(q.cursor, 'audience')
  return db.$queryRawUnsafe<AudienceRow[]>(
    `SELECT ${AUDIENCE_COLUMNS} FROM audiences a
     WHERE a.project_id = $1 ${cursor ? 'AND (a.created_at, a.id) < ($3::timestamptz, $4)' : ''}
     ORDER BY a.created_at DESC, a.id DESC LIMIT $2`,
    ...[projectId, q.limit + 1, ...(cursor ? [cursor.createdAt, cursor.id] : [])],
  )
}

export async function renameAudience(
  db: Sql,
  projectId: string,
  id: string,
  name: string | undefined,
): Promise<AudienceRow> {
  if (name === undefined) return findAudience(db, projectId, id)
  try {
    const [row] = await db.$queryRawUnsafe<AudienceRow[]>(
      `UPDATE audiences a SET name = $3, updated_at = now() WHERE a.project_id = $1 AND a.id = $2
       RETURNING ${AUDIENCE_COLUMNS}`,
      projectId,
      id,
      name,
    )
    if (!row) throw audienceNotFound(id)
    return row
  } catch (e) {
    if (isUniqueViolation(e)) throw exists(name)
    throw e
  }
}

/**
 * Deletes an audience and its memberships (never the contacts). A broadcast that is not sent or
 * canceled still needs it: 409 `audience_in_use`. The audience row is locked first, so a
 * broadcast created for it concurrently either sees it gone or blocks the delete.
 */
export async function deleteAudience(db: Db, projectId: string, id: string): Promise<void> {
  await db.$transaction(async (tx) => {
    const locked = await tx.$queryRawUnsafe<unknown[]>(
      'SELECT 1 FROM audiences WHERE project_id = $1 AND id = $2 FOR UPDATE',
      projectId,
      id,
    )
    if (locked.length === 0) throw audienceNotFound(id)
    const users = await tx.$queryRawUnsafe<Array<{ id: string }>>(
      'SELECT id FROM broadcasts WHERE audience_id = $1 AND status = ANY($2::text[]) LIMIT 1',
      id,
      [...OPEN_STATUSES],
    )
    if (users.length > 0) {
      throw fail(
        'audience_in_use',
        `Broadcast ${users[0]!.id} uses this audience; send, cancel or delete it first`,
      )
    }
    // The audience first: it waits for transactions adding members to it (requireAudience's
    // lock), and the members' delete after it then sees what they committed.
    await tx.$executeRawUnsafe('DELETE FROM audiences WHERE id = $1', id)
    await tx.$executeRawUnsafe('DELETE FROM audience_members WHERE audience_id = $1', id)
  })
}

/**
 * Adds the project's contacts among `contactIds`; any other id is 404 `contact_not_found`. Run
 * in a transaction: the contacts stay locked against deletion (FOR KEY SHARE) until the members
 * are committed, and a deletion waiting for them then removes those members too (deleteContact
 * deletes the contact first, its memberships after), so no member outlives its contact.
 */
export async function addMembers(
  db: Sql,
  projectId: string,
  audienceId: string,
  contactIds: readonly string[],
): Promise<number> {
  const ids = [...new Set(contactIds)]
  const known = await db.$queryRawUnsafe<Array<{ id: string }>>(
    'SELECT id FROM contacts WHERE project_id = $1 AND id = ANY($2::text[]) FOR KEY SHARE',
    projectId,
    ids,
  )
  if (known.length < ids.length) {
    const have = new Set(known.map((k) => k.id))
    const i = contactIds.findIndex((id) => !have.has(id))
    throw fail('contact_not_found', noSuch('contact', 'id', contactIds[i], 'contact'), `contactIds.${i}`)
  }
  return insertMembers(db, audienceId, ids)
}

/**
 * Adds contacts known to be the project's; answers how many were not members yet. In contact id
 * order: two requests adding the same contacts in other orders wait for each other instead of
 * deadlocking (PostgreSQL failed one of them: a 500).
 */
export function insertMembers(db: Sql, audienceId: string, contactIds: readonly string[]): Promise<number> {
  return db.$executeRawUnsafe(
    `INSERT INTO audience_members (audience_id, contact_id, created_at)
     SELECT $1, id, now() FROM unnest($2::text[]) AS id ORDER BY id ON CONFLICT DO NOTHING`,
    audienceId,
    [...contactIds],
  )
}

export async function removeMembers(
  db: Sql,
  audienceId: string,
  contactIds: readonly string[],
): Promise<number> {
  return db.$executeRawUnsafe(
    'DELETE FROM audience_members WHERE audience_id = $1 AND contact_id = ANY($2::text[])',
    audienceId,
    [...new Set(contactIds)],
  )
}
