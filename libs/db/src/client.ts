import { PrismaPg } from '@prisma/adapter-pg'
import { PrismaClient } from './generated/client/index.js'

export type Db = PrismaClient

export interface DbOptions {
  /** Connections in this process's pool. */
  poolSize?: number
  /** DATABASE_QUERY_TIMEOUT_MS (serverOptions, clientQueryTimeout); 0: none. */
  queryTimeoutMs?: number
}

/** DATABASE_QUERY_TIMEOUT_MS's default. */
export const DEFAULT_QUERY_TIMEOUT_MS = 15_000

/**
 * The `options` startup parameter of a connection: its schema's `search_path`, PostgreSQL's own
 * `statement_timeout` of `queryTimeoutMs` (0: none), which cancels a slow statement (its locks
 * released, the connection kept), and any further server settings. The time-out goes in `options`
 * rather than as a startup parameter of its own (node-postgres' `statement_timeout`), which
 * PgBouncer refuses unless it is in `ignore_startup_parameters`, where `options` already is
 * (docs/operations.md).
 */
export function serverOptions(
  schema: string,
  queryTimeoutMs: number,
  settings: Record<string, string> = {},
): string {
  const all = { ...(queryTimeoutMs > 0 ? { statement_timeout: String(queryTimeoutMs) } : {}), ...settings }
  return [`-c search_path="${schema}"`, ...Object.entries(all).map(([k, v]) => `-c ${k}=${v}`)].join(' ')
}

/**
 * The client's own bound on a query, a second past the server's: it gives up on a server that
 * answers nothing at all (a hung host, a partition without resets), which no server-side setting
 * can catch. Without both, a query on a hung database held its request, and a shutdown's drain,
 * until the connection died.
 */
export function clientQueryTimeout(queryTimeoutMs: number): { query_timeout?: number } {
  return queryTimeoutMs > 0 ? { query_timeout: queryTimeoutMs + 1_000 } : {}
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
  const queryTimeoutMs = opts.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS
  const adapter = new PrismaPg(
    {
      connectionString: url.toString(),
      max: opts.poolSize ?? 10,
      // Raw SQL uses unqualified table names; Prisma's own queries are qualified by `schema`.
      options: serverOptions(schema, queryTimeoutMs),
      connectionTimeoutMillis: 5_000,
      ...clientQueryTimeout(queryTimeoutMs),
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
