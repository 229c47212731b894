import {
  isStorableInstant,
  MailerError,
  SUPPRESSION_REASONS,
  type SuppressionReason,
  type SuppressionRecord,
  unstorablePart,
} from '@mailer/contracts'
import { type Db, Prisma } from '@mailer/db'

interface Row {
  address: string
  reason: SuppressionReason
  sourceEmailId: string | null
  createdAt: Date
}

const COLUMNS = Prisma.sql`address, reason, source_email_id AS "sourceEmailId", created_at AS "createdAt"`

export const toSuppressionRecord = (r: Row): SuppressionRecord => ({
  address: r.address,
  reason: r.reason,
  sourceEmailId: r.sourceEmailId,
  createdAt: r.createdAt.toISOString(),
})

/** Keyset position (createdAt DESC, address DESC); JSON because an address may hold any character. */
export function encodeSuppressionCursor(r: Pick<Row, 'createdAt' | 'address'>): string {
  return Buffer.from(JSON.stringify([r.createdAt.toISOString(), r.address])).toString('base64url')
}

export function decodeSuppressionCursor(s: string): { createdAt: Date; address: string } {
  try {
    const [ts, address] = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as unknown[]
    const createdAt = new Date(String(ts))
    // Text or an instant PostgreSQL cannot take (a NUL, a lone surrogate, year 0) was a 500.
    if (typeof address === 'string' && !unstorablePart(address) && isStorableInstant(createdAt))
      return { createdAt, address }
  } catch {
    /* fall through */
  }
  throw new MailerError('invalid_query', 'cursor is not a cursor this API returned', { param: 'cursor' })
}

const escapeLike = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`)

/**
 * The deployment-wide `suppressions` table (owned by the email service). Takes a transaction as
 * well, for writers that suppress together with other changes.
 */
export class SuppressionStore {
  constructor(private readonly db: Pick<Db, '$queryRaw' | '$executeRaw'>) {}

  /** Newest first; `q` matches anywhere in the (lower-case) address. Fetches `limit + 1` rows. */
  list(opts: {
    q?: string | undefined
    limit: number
    after?: { createdAt: Date; address: string } | undefined
  }): Promise<Row[]> {
    const q = opts.q ? Prisma.sql`AND address LIKE ${`%${escapeLike(opts.q.toLowerCase())}%`}` : Prisma.empty
    const after = opts.after
      ? Prisma.sql`AND (created_at, address) < (${opts.after.createdAt}, ${opts.after.address})`
      : Prisma.empty
    return this.db.$queryRaw<Row[]>`
      SELECT ${COLUMNS} FROM suppressions WHERE true ${q} ${after}
      ORDER BY created_at DESC, address DESC LIMIT ${opts.limit + 1}`
  }

  /**
   * Adds an address, or returns the existing entry. One statement decides, so concurrent adds
   * cannot downgrade: an existing reason is replaced only by a stronger one (SUPPRESSION_REASONS
   * order), keeping the original `createdAt`. An existing entry is locked and returned by the same
   * statement (a no-op update when nothing is stronger): read separately, a removal racing this
   * add could take it away between the two, and retries of that lost often enough on a busy
   * server to answer 503. `changed` (for the metric and the log) compares with the entry as the
   * statement began.
   */
  async add(
    address: string,
    reason: SuppressionReason,
    sourceEmailId: string | null,
  ): Promise<{ row: Row; changed: boolean }> {
    const ranks = [...SUPPRESSION_REASONS]
    const stronger = Prisma.sql`array_position(${ranks}::text[], suppressions.reason) < array_position(${ranks}::text[], EXCLUDED.reason)`
    const [row] = await this.db.$queryRaw<Array<Row & { previous: SuppressionReason | null }>>`
      WITH prev AS (SELECT reason FROM suppressions WHERE address = ${address})
      INSERT INTO suppressions (address, reason, source_email_id, created_at)
      VALUES (${address}, ${reason}, ${sourceEmailId}, now())
      ON CONFLICT (address) DO UPDATE
        SET reason = CASE WHEN ${stronger} THEN EXCLUDED.reason ELSE suppressions.reason END,
            source_email_id = CASE WHEN ${stronger}
              THEN COALESCE(EXCLUDED.source_email_id, suppressions.source_email_id)
              ELSE suppressions.source_email_id END
      RETURNING ${COLUMNS}, (SELECT reason FROM prev) AS previous`
    if (!row) throw new Error('suppression upsert returned no row')
    const { previous, ...stored } = row
    return { row: stored, changed: previous !== stored.reason }
  }

  async remove(address: string): Promise<boolean> {
    const n = await this.db.$executeRaw`DELETE FROM suppressions WHERE address = ${address}`
    return n > 0
  }
}
