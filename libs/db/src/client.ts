import { PrismaPg } from '@prisma/adapter-pg'
import { PrismaClient } from './generated/client/index.js'

export type Db = PrismaClient

export interface DbOptions {
  /** Connections in this process's pool. */
  poolSize?: number
}

/**
 * Reads the PostgreSQL schema from `?schema=` (Prisma's own convention) so that every test
 * file, and any operator who wants one, can keep Mailer's tables in a schema of their own.
 */
export function schemaOf(databaseUrl: string): string {
  return new URL(databaseUrl).searchParams.get('schema') ?? 'public'
}

export function createDb(databaseUrl: string, opts: DbOptions = {}): Db {
  const url = new URL(databaseUrl)
  const schema = schemaOf(databaseUrl)
  url.searchParams.delete('schema')
  const adapter = new PrismaPg(
    {
      connectionString: url.toString(),
      max: opts.poolSize ?? 10,
      // Raw SQL uses unqualified table names; Prisma's own queries are qualified by `schema`.
      options: `-c search_path="${schema}"`,
      connectionTimeoutMillis: 5_000,
    },
    { schema },
  )
  return new PrismaClient({ adapter })
}

/** One cheap round trip, used by readiness probes and GET /health. */
export async function pingDb(db: Db): Promise<boolean> {
  try {
    await db.$queryRawUnsafe('SELECT 1')
    return true
  } catch {
    return false
  }
}
