import {
  type DnsRecord,
  DnsRecord as DnsRecordSchema,
  type DomainRecord,
  type DomainVerification,
} from '@mailer/contracts'
import { type Db, Prisma } from '@mailer/db'
import { z } from 'zod'

export interface DomainRow {
  id: string
  projectId: string
  name: string
  verification: DomainVerification
  dkimSelector: string
  dkimPublicKey: string
  records: DnsRecord[]
  checkedAt: Date | null
  createdAt: Date
}

const StoredRecords = z.array(DnsRecordSchema).catch([])

// The private key never leaves the table through this store: the dispatcher reads it itself.
const select = {
  id: true,
  projectId: true,
  name: true,
  verification: true,
  dkimSelector: true,
  dkimPublicKey: true,
  records: true,
  checkedAt: true,
  createdAt: true,
} as const

type Selected = Prisma.DomainGetPayload<{ select: typeof select }>

const toRow = (d: Selected): DomainRow => ({
  ...d,
  verification: d.verification as DomainVerification,
  records: StoredRecords.parse(d.records),
})

export const toDomainRecord = (d: DomainRow): DomainRecord => ({
  domain: d.name,
  verification: d.verification,
  records: d.records,
  checkedAt: d.checkedAt?.toISOString() ?? null,
  createdAt: d.createdAt.toISOString(),
})

/** The `domains` table (owned by the email service). */
export class DomainStore {
  constructor(private readonly db: Db) {}

  async find(projectId: string, name: string): Promise<DomainRow | null> {
    const d = await this.db.domain.findUnique({ where: { projectId_name: { projectId, name } }, select })
    return d ? toRow(d) : null
  }

  async listByProject(projectId: string): Promise<DomainRow[]> {
    const rows = await this.db.domain.findMany({ where: { projectId }, select, orderBy: [{ name: 'asc' }] })
    return rows.map(toRow)
  }

  async listAll(): Promise<DomainRow[]> {
    const rows = await this.db.domain.findMany({ select, orderBy: [{ name: 'asc' }, { createdAt: 'asc' }] })
    return rows.map(toRow)
  }

  /**
   * Inserts a new domain; when a concurrent setup of the same domain won the race, returns
   * theirs (and `created: false`) so both callers answer with one key. `withSelector` names the
   * DKIM selector and builds the records once the selectors other projects use for this name are
   * known: setups of one name take turns (an advisory lock on it), so no two pick the same one.
   */
  async create(
    data: { id: string; projectId: string; name: string; dkimPrivateKey: string; dkimPublicKey: string },
    withSelector: (taken: ReadonlySet<string>) => { dkimSelector: string; records: DnsRecord[] },
  ): Promise<{ row: DomainRow; created: boolean }> {
    const { projectId, name } = data
    try {
      return await this.db.$transaction(async (tx) => {
        await tx.$executeRawUnsafe(
          'SELECT pg_advisory_xact_lock(hashtext($1)::bigint)',
          `domain-name:${name}`,
        )
        const existing = await tx.domain.findUnique({
          where: { projectId_name: { projectId, name } },
          select,
        })
        if (existing) return { row: toRow(existing), created: false }
        const used = await tx.domain.findMany({ where: { name }, select: { dkimSelector: true } })
        const { dkimSelector, records } = withSelector(new Set(used.map((u) => u.dkimSelector)))
        const d = await tx.domain.create({
          data: { ...data, dkimSelector, records: records as object[], verification: 'pending' },
          select,
        })
        return { row: toRow(d), created: true }
      })
    } catch (e) {
      // A replica of an earlier release inserts without taking the lock (during a rollout).
      if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === 'P2002') {
        const existing = await this.find(projectId, name)
        if (existing) return { row: existing, created: false }
      }
      throw e
    }
  }

  async saveCheck(
    id: string,
    change: { verification: DomainVerification; records: DnsRecord[]; checkedAt: Date | null },
  ): Promise<DomainRow> {
    const d = await this.db.domain.update({
      where: { id },
      data: { ...change, records: change.records as object[] },
      select,
    })
    return toRow(d)
  }
}
