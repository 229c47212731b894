import {
  type BroadcastsQuery,
  type Caller,
  type CreateBroadcastBody,
  decodeCursor,
  fail,
  newId,
  noSuch,
  type UpdateBroadcastBody,
} from '@mailer/contracts'
import type { Db } from '@mailer/db'
import { CANCELABLE_STATUSES, notCancelable, notDraft, type SendPlan } from '../domain/broadcast-state.js'
import type { ContactForSend } from '../domain/personalize.js'
import type { BroadcastRow, BroadcastSummaryRow } from '../domain/records.js'
import { audienceNotFound } from './audience-store.js'

type Sql = Pick<Db, '$queryRawUnsafe' | '$executeRawUnsafe'>

// A list item's columns: no html or text, which may be 1,000,000 characters each.
const SUMMARY_COLUMNS = `b.id, b.project_id AS "projectId", b.audience_id AS "audienceId", b.name,
  b.from_address AS "from", b.subject, b.status, b.scheduled_at AS "scheduledAt",
  b.resume_at AS "resumeAt", b.started_at AS "startedAt", b.completed_at AS "completedAt",
  b.created_at AS "createdAt", b.updated_at AS "updatedAt"`
const COLUMNS = `${SUMMARY_COLUMNS}, b.html, b.text`

export const broadcastNotFound = (id: string) =>
  fail('broadcast_not_found', noSuch('broadcast', 'id', id, 'broadcast'), 'id')

/** The audience must exist; FOR SHARE keeps a concurrent audience delete from slipping past. */
async function lockAudience(tx: Sql, projectId: string, audienceId: string): Promise<void> {
  const rows = await tx.$queryRawUnsafe<unknown[]>(
    'SELECT 1 FROM audiences WHERE project_id = $1 AND id = $2 FOR SHARE',
    projectId,
    audienceId,
  )
  if (rows.length === 0) throw audienceNotFound(audienceId, 'audienceId')
}

export async function createBroadcast(
  db: Db,
  projectId: string,
  input: CreateBroadcastBody,
): Promise<BroadcastRow> {
  return db.$transaction(async (tx) => {
    await lockAudience(tx, projectId, input.audienceId)
    const [row] = await tx.$queryRawUnsafe<BroadcastRow[]>(
      `INSERT INTO broadcasts AS b (id, project_id, audience_id, name, from_address, subject, html, text, status, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'draft', now(), now()) RETURNING ${COLUMNS}`,
      newId('broadcast'),
      projectId,
      input.audienceId,
      input.name ?? null,
      input.from,
      input.subject,
      input.html,
      input.text ?? null,
    )
    return row!
  })
}

export async function findBroadcast(db: Sql, projectId: string, id: string): Promise<BroadcastRow> {
  const [row] = await db.$queryRawUnsafe<BroadcastRow[]>(
    `SELECT ${COLUMNS} FROM broadcasts b WHERE b.project_id = $1 AND b.id = $2`,
    projectId,
    id,
  )
  if (!row) throw broadcastNotFound(id)
  return row
}

export async function listBroadcasts(
  db: Sql,
  projectId: string,
  q: BroadcastsQuery,
): Promise<BroadcastSummaryRow[]> {
  const params: unknown[] = [projectId, q.limit + 1]
  const where = ['b.project_id = $1']
  if (q.status) {
    params.push(q.status)
    where.push(`b.status = $${params.length}`)
  }
  const cursor = decodeCursor(q.cursor, 'broadcast')
  if (cursor) {
    params.push(cursor.createdAt, cursor.id)
    where.push(`(b.created_at, b.id) < ($${params.length - 1}::timestamptz, $${params.length})`)
  }
  return db.$queryRawUnsafe<BroadcastSummaryRow[]>(
    `SELECT ${SUMMARY_COLUMNS} FROM broadcasts b WHERE ${where.join(' AND ')}
     ORDER BY b.created_at DESC, b.id DESC LIMIT $2`,
    ...params,
  )
}

/** A change that only applies to a draft: 404 when missing, 409 `broadcast_not_draft` otherwise. */
async function draftOnly<T>(db: Sql, projectId: string, id: string, rows: T[]): Promise<T> {
  if (rows[0]) return rows[0]
  const current = await findBroadcast(db, projectId, id)
  throw notDraft(current.status)
}

/**
 * The draft, locked until the transaction ends (a send or delete waits for the change): 404 when
 * missing, 409 `broadcast_not_draft` when it is no draft.
 */
async function lockDraft(tx: Sql, projectId: string, id: string): Promise<void> {
  const [row] = await tx.$queryRawUnsafe<Array<{ status: string }>>(
    'SELECT status FROM broadcasts WHERE project_id = $1 AND id = $2 FOR UPDATE',
    projectId,
    id,
  )
  if (!row) throw broadcastNotFound(id)
  if (row.status !== 'draft') throw notDraft(row.status)
}

export async function updateDraft(
  db: Db,
  projectId: string,
  id: string,
  patch: UpdateBroadcastBody,
): Promise<BroadcastRow> {
  return db.$transaction(async (tx) => {
    // The draft first: a PATCH of a broadcast that is no draft is 409 broadcast_not_draft whatever
    // its body names, an unknown audienceId included (contract: drafts only).
    await lockDraft(tx, projectId, id)
    if (patch.audienceId !== undefined) await lockAudience(tx, projectId, patch.audienceId)
    const sets = ['updated_at = now()']
    const params: unknown[] = [projectId, id]
    const columns: Record<keyof UpdateBroadcastBody, string> = {
      audienceId: 'audience_id',
      from: 'from_address',
      subject: 'subject',
      html: 'html',
      text: 'text',
      name: 'name',
    }
    for (const [field, column] of Object.entries(columns) as Array<[keyof UpdateBroadcastBody, string]>) {
      if (patch[field] === undefined) continue
      params.push(patch[field])
      sets.push(`${column} = $${params.length}`)
    }
    const rows = await tx.$queryRawUnsafe<BroadcastRow[]>(
      `UPDATE broadcasts b SET ${sets.join(', ')} WHERE b.project_id = $1 AND b.id = $2 AND b.status = 'draft'
       RETURNING ${COLUMNS}`,
      ...params,
    )
    return draftOnly(tx, projectId, id, rows)
  })
}

export async function deleteDraft(db: Sql, projectId: string, id: string): Promise<void> {
  const rows = await db.$queryRawUnsafe<Array<{ id: string }>>(
    `DELETE FROM broadcasts WHERE project_id = $1 AND id = $2 AND status = 'draft' RETURNING id`,
    projectId,
    id,
  )
  await draftOnly(db, projectId, id, rows)
}

/**
 * draft → sending (due now) or scheduled, for the draft `checked` (as the send check read it),
 * only while its content is still what was checked: a PATCH landing between the check and this
 * write (another `from`, an html whose template no longer renders) would otherwise go out
 * unchecked. Answers null when the draft changed meanwhile (check it again), 409
 * `broadcast_not_draft` when it is no draft anymore. Fixes the caller the emails will act as: the
 * project (by slug, so its current limits apply at each chunk), and a test key's mode and id.
 */
export async function markSent(
  db: Sql,
  caller: Caller,
  checked: BroadcastRow,
  plan: SendPlan,
): Promise<BroadcastRow | null> {
  const project = caller.project!
  // With the broadcast's row of stored counts (count-store.ts), counted (none yet) and due when
  // the sender takes it up, in the same statement: a broadcast past draft always has one.
  const rows = await db.$queryRawUnsafe<BroadcastRow[]>(
    `WITH sent AS (
       UPDATE broadcasts b SET status = $3, scheduled_at = $4, resume_at = $5, project_slug = $6, mode = $7,
         api_key_id = $8, updated_at = now()
       WHERE b.project_id = $1 AND b.id = $2 AND b.status = 'draft'
         AND b.audience_id = $9 AND b.from_address = $10 AND b.subject = $11
         AND b.html IS NOT DISTINCT FROM $12 AND b.text IS NOT DISTINCT FROM $13
       RETURNING ${COLUMNS}),
     counted AS (
       INSERT INTO broadcast_email_counts (broadcast_id, counted_at, due_at)
       SELECT id, now(), "resumeAt" FROM sent
       ON CONFLICT (broadcast_id) DO NOTHING)
     SELECT * FROM sent`,
    project.id,
    checked.id,
    plan.status,
    plan.scheduledAt,
    plan.resumeAt,
    project.slug,
    caller.mode,
    caller.via === 'api' ? caller.apiKeyId : null,
    checked.audienceId,
    checked.from,
    checked.subject,
    checked.html,
    checked.text,
  )
  if (rows[0]) return rows[0]
  const current = await findBroadcast(db, project.id, checked.id)
  if (current.status !== 'draft') throw notDraft(current.status)
  return null
}

/** Stops a scheduled, sending or paused broadcast; emails already handed over still go out. */
export async function cancelBroadcast(db: Sql, projectId: string, id: string): Promise<BroadcastRow> {
  const [row] = await db.$queryRawUnsafe<BroadcastRow[]>(
    `UPDATE broadcasts b SET status = 'canceled', resume_at = NULL, locked_until = NULL, updated_at = now()
     WHERE b.project_id = $1 AND b.id = $2 AND b.status = ANY($3::text[])
     RETURNING ${COLUMNS}`,
    projectId,
    id,
    [...CANCELABLE_STATUSES],
  )
  if (row) return row
  throw notCancelable((await findBroadcast(db, projectId, id)).status)
}

/** The audience's first contact in send order, for the dry run that checks a broadcast at send time. */
export async function firstAudienceContact(
  db: Sql,
  projectId: string,
  audienceId: string,
): Promise<ContactForSend | null> {
  const [row] = await db.$queryRawUnsafe<ContactForSend[]>(
    `SELECT c.id, c.email, c.first_name AS "firstName", c.last_name AS "lastName", c.data
     FROM audience_members m JOIN contacts c ON c.id = m.contact_id
     WHERE m.audience_id = $1 AND c.project_id = $2 ORDER BY m.contact_id LIMIT 1`,
    audienceId,
    projectId,
  )
  return row ?? null
}
