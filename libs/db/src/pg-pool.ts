import pg from 'pg'
import { clientQueryTimeout, DEFAULT_QUERY_TIMEOUT_MS, schemaOf, serverOptions } from './client.js'

export type PgPool = pg.Pool
export type PgClient = pg.PoolClient

/**
 * A plain node-postgres pool on the same database and schema as `createDb`, for hot paths that
 * are raw SQL anyway: a Prisma raw query costs ~1.5 ms more than the same query through `pg`, and
 * an interactive transaction several of those (measured in bench/README.md).
 */
export function createPgPool(
  databaseUrl: string,
  opts: {
    max?: number
    /** DATABASE_QUERY_TIMEOUT_MS (serverOptions, clientQueryTimeout); 0: none. */
    queryTimeoutMs?: number
    /** Server settings for every connection of this pool (`-c name=value`). */
    settings?: Record<string, string>
  } = {},
): PgPool {
  const url = new URL(databaseUrl)
  const schema = schemaOf(databaseUrl)
  url.searchParams.delete('schema')
  const queryTimeoutMs = opts.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS
  const pool = new pg.Pool({
    connectionString: url.toString(),
    max: opts.max ?? 4,
    options: serverOptions(schema, queryTimeoutMs, opts.settings),
    connectionTimeoutMillis: 5_000,
    // A connection whose server vanished without a FIN (a node lost, a network partition) would
    // leave a query waiting forever and its caller holding a message: keepalives notice the dead
    // peer, and the client gives up on any one query after the statement time-out.
    keepAlive: true,
    ...clientQueryTimeout(queryTimeoutMs),
    // Idle connections never keep a process (or a test worker) alive.
    allowExitOnIdle: true,
  })
  // An idle client's connection dropping (a database restart) must not crash the process.
  pool.on('error', () => undefined)
  return pool
}

/** Runs `work` in a transaction on one pooled connection: commit on success, roll back on error. */
export async function inTransaction<T>(pool: PgPool, work: (c: PgClient) => Promise<T>): Promise<T> {
  const c = await pool.connect()
  let broken = false
  // A checked-out client has no 'error' listener of its own (pg-pool removes its idle one), and
  // an 'error' event without a listener kills the process: a database restart while this
  // transaction holds the connection must fail the transaction, not the service.
  const onError = () => {
    broken = true
  }
  c.on('error', onError)
  try {
    await c.query('BEGIN')
    const result = await work(c)
    await c.query('COMMIT')
    return result
  } catch (err) {
    await c.query('ROLLBACK').catch(() => {
      broken = true
    })
    throw err
  } finally {
    c.removeListener('error', onError)
    c.release(broken)
  }
}
