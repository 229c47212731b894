import { PrismaPg } from '@prisma/adapter-pg'
import { PrismaClient } from './generated/client/index.js'

export type Db = PrismaClient

export interface DbOptions {
  /** Connections in this process's pool. */
  poolSize?: number
  /** DATABASE_QUERY_TIMEOUT_MS (statementTimeouts); 0: none. */
  queryTimeoutMs?: number
}

/** DATABASE_QUERY_TIMEOUT_MS's default. */
export const DEFAULT_QUERY_TIMEOUT_MS = 15_000

/**
 * node-postgres settings bounding each statement to `ms` (0: no bound): PostgreSQL's own
 * `statement_timeout` cancels a slow statement (its locks released, the connection kept), and
 * the client gives up a second later on a server that answers nothing at all (a hung host, a
 * partition without resets), which no server-side setting can catch. Without them a query on a
 * hung database held its request, and a shutdown's drain, until the connection died.
 */
export function statementTimeouts(ms: number): { statement_timeout?: number; query_timeout?: number } {
  return ms > 0 ? { statement_timeout: ms, query_timeout: ms + 1_000 } : {}
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
      ...statementTimeouts(opts.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS),
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
