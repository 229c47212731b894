import type { Db } from '@mailer/db'
import type { ContactForSend } from '../domain/personalize.js'

/** A broadcast this replica holds the lease on, with what its chunks need. */
export interface ClaimedBroadcast {
  id: string
  projectId: string
  projectSlug: string | null
  audienceId: string
  mode: string
  apiKeyId: string | null
  from: string
  subject: string
  html: string
  text: string | null
  /** The last contact done with (contacts are walked in id order); null before the first. */
  cursor: string | null
  /**
   * The lease's end as PostgreSQL last wrote it (claim, renewal, progress): the fencing token that
   * tells this replica's hold apart from a later claim by another one.
   */
  lease: string
}

export interface AudienceContact extends ContactForSend {
  unsubscribed: boolean
}

const ms = (n: number) => `($${n}::float8 * interval '1 millisecond')`

/**
 * The sender's SQL. Every write after the claim is conditional on the broadcast still being
 * `sending`, at the cursor and under the lease this replica last wrote: if it was canceled, or its
 * lease lapsed and another replica claimed it, the write does nothing and the caller stops (emails
 * already handed over are idempotent by key, so nothing is ever sent twice either way).
 */
export class SenderStore {
  constructor(private readonly db: Db) {}

  /**
   * Claims up to `n` due broadcasts (scheduled, sending or paused; past `resume_at`; lease free),
   * FOR UPDATE SKIP LOCKED so replicas never claim the same one, and marks them `sending`.
   */
  async claimDue(n: number, leaseMs: number): Promise<ClaimedBroadcast[]> {
    return this.db.$queryRawUnsafe<ClaimedBroadcast[]>(
      `WITH due AS (
         SELECT id FROM broadcasts
         WHERE status IN ('scheduled', 'sending', 'paused')
           AND (resume_at IS NULL OR resume_at <= now())
           AND (locked_until IS NULL OR locked_until < now())
         ORDER BY resume_at NULLS FIRST, id
         LIMIT $1 FOR UPDATE SKIP LOCKED)
       UPDATE broadcasts b SET status = 'sending', locked_until = now() + ${ms(2)}, resume_at = NULL,
         started_at = COALESCE(b.started_at, now()), updated_at = now()
       FROM due WHERE b.id = due.id
       RETURNING b.id, b.project_id AS "projectId", b.project_slug AS "projectSlug", b.audience_id AS "audienceId",
         b.mode, b.api_key_id AS "apiKeyId", b.from_address AS "from", b.subject, b.html, b.text,
         b.cursor_contact_id AS "cursor", b.locked_until::text AS lease`,
      n,
      leaseMs,
    )
  }

  /**
   * Renews the leases of the broadcasts this replica holds, in one statement, each only while it
   * is still `sending` under this replica's lease; answers each one's new token, in order (null:
   * lost, to a cancel, a pause or release of its own, or another replica's claim).
   */
  async renew(bs: ClaimedBroadcast[], leaseMs: number): Promise<Array<string | null>> {
    if (bs.length === 0) return []
    // By position, not id: a stale claim of a row and a fresh one are told apart.
    const rows = await this.db.$queryRawUnsafe<Array<{ n: number; lease: string }>>(
      `UPDATE broadcasts b SET locked_until = now() + ${ms(3)}
       FROM unnest($1::text[], $2::timestamptz[]) WITH ORDINALITY AS v(id, lease, n)
       WHERE b.id = v.id AND b.status = 'sending' AND b.locked_until = v.lease
       RETURNING v.n::int AS n, b.locked_until::text AS lease`,
      bs.map((b) => b.id),
      bs.map((b) => b.lease),
      leaseMs,
    )
    const tokens = new Map(rows.map((r) => [r.n, r.lease]))
    return bs.map((_, i) => tokens.get(i + 1) ?? null)
  }

  /**
   * The next contacts of the audience after the cursor, in contact id order (a stable walk); none
   * once the broadcast is no longer `sending`. A cancel is seen by the lease only at its next
   * renewal (a third of a lease later), so the chunk read after a cancel committed would still
   * have been sent: fenced here, it reads nothing, and the step's advance (fenced the same way)
   * finds the broadcast lost.
   */
  async nextContacts(b: ClaimedBroadcast, limit: number): Promise<AudienceContact[]> {
    const after = b.cursor === null ? '' : 'AND m.contact_id > $5'
    return this.db.$queryRawUnsafe<AudienceContact[]>(
      `SELECT c.id, c.email, c.first_name AS "firstName", c.last_name AS "lastName", c.unsubscribed, c.data
       FROM audience_members m JOIN contacts c ON c.id = m.contact_id
       WHERE m.audience_id = $1 AND c.project_id = $2 ${after}
         AND EXISTS (SELECT 1 FROM broadcasts WHERE id = $4 AND status = 'sending')
       ORDER BY m.contact_id LIMIT $3`,
      ...[b.audienceId, b.projectId, limit, b.id, ...(b.cursor === null ? [] : [b.cursor])],
    )
  }

  /** Records progress up to `cursor` and renews the lease; `complete` also ends the broadcast as `sent`. */
  advance(b: ClaimedBroadcast, cursor: string | null, leaseMs: number, complete: boolean): Promise<boolean> {
    return complete
      ? this.settle(b, `cursor_contact_id = $3, status = 'sent', completed_at = now(), locked_until = NULL`, [
          cursor,
        ])
      : this.settle(b, `cursor_contact_id = $3, locked_until = now() + ${ms(4)}`, [cursor, leaseMs])
  }

  /** A send limit was hit: `paused` until `resume_at`, then the next run continues after `cursor`. */
  pause(b: ClaimedBroadcast, cursor: string | null, resumeMs: number): Promise<boolean> {
    return this.settle(
      b,
      `cursor_contact_id = $3, status = 'paused', resume_at = now() + ${ms(4)}, locked_until = NULL`,
      [cursor, resumeMs],
    )
  }

  /** Gives the broadcast up for `delayMs` (pacing, or a failed chunk) without pausing it. */
  release(b: ClaimedBroadcast, delayMs: number): Promise<boolean> {
    return this.settle(b, `resume_at = now() + ${ms(3)}, locked_until = NULL`, [delayMs])
  }

  /** The write, if `b` is still this replica's; a lease it renews becomes `b`'s token. */
  private async settle(b: ClaimedBroadcast, set: string, params: unknown[]): Promise<boolean> {
    const [row] = await this.db.$queryRawUnsafe<Array<{ lease: string | null }>>(
      `UPDATE broadcasts SET ${set}, updated_at = now()
       WHERE id = $1 AND status = 'sending' AND cursor_contact_id IS NOT DISTINCT FROM $2::text
         AND locked_until = $${params.length + 3}::timestamptz
       RETURNING locked_until::text AS lease`,
      b.id,
      b.cursor,
      ...params,
      b.lease,
    )
    if (row?.lease) b.lease = row.lease
    return row !== undefined
  }

  /** Broadcasts started and not finished (sending or paused), for the `active` gauge. */
  async countActive(): Promise<number> {
    const [row] = await this.db.$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM broadcasts WHERE status IN ('sending', 'paused')`,
    )
    return Number(row?.n ?? 0)
  }
}
