import { randomBytes } from 'node:crypto'
import { newId } from '@mailer/contracts'
import type { TestEnv } from '@mailer/testing'
import { connect } from 'nats'
import pg from 'pg'

/** Runs one SQL statement in the test file's own schema and returns its rows. */
export async function sql(te: TestEnv, text: string, params: unknown[] = []): Promise<any[]> {
  const url = new URL(te.databaseUrl)
  const schema = url.searchParams.get('schema')!
  url.searchParams.delete('schema')
  const c = new pg.Client({ connectionString: url.toString(), options: `-c search_path=${schema}` })
  await c.connect()
  try {
    return (await c.query(text, params)).rows
  } finally {
    await c.end()
  }
}

/**
 * Inserts a sending domain straight into `domains` (for states the admin setup route does not
 * produce, such as `pending` under DOMAIN_VERIFICATION=skip) and tells the email replicas to drop
 * their cached copy, as the domains routes do. The DKIM key is a placeholder: not for delivery.
 */
export async function insertDomain(
  te: TestEnv,
  projectId: string,
  name: string,
  verification: 'pending' | 'verified' | 'failed' = 'verified',
): Promise<void> {
  await sql(
    te,
    `INSERT INTO domains (id, project_id, name, verification, dkim_selector, dkim_private_key, dkim_public_key)
     VALUES ($1, $2, $3, $4, 'test', $5, $5)
     ON CONFLICT (project_id, name) DO UPDATE SET verification = EXCLUDED.verification`,
    [newId('domain'), projectId, name, verification, randomBytes(16).toString('hex')],
  )
  const nc = await connect({ servers: te.natsUrl })
  try {
    nc.publish(`${te.natsPrefix}.domains.invalidate`, JSON.stringify({ projectId }))
    await nc.flush()
  } finally {
    await nc.close()
  }
}

/**
 * Every table of the test file's schema, each with its row count and a digest of all its rows:
 * equal before and after means nothing was inserted, updated or deleted. `api_keys.last_used_at`
 * is left out: authenticating with a key writes it (at most once a minute), whatever the request.
 */
export async function tableDigests(te: TestEnv): Promise<Record<string, string>> {
  const tables = await sql(
    te,
    `SELECT table_name FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations'`,
  )
  const out: Record<string, string> = {}
  for (const { table_name: t } of tables) {
    const [row] = await sql(
      te,
      `SELECT count(*)::int AS n, md5(coalesce(string_agg(r, E'\\n' ORDER BY r), '')) AS digest
       FROM (SELECT (to_jsonb(x) - 'last_used_at')::text AS r FROM "${t}" x) rows`,
    )
    out[t] = `${row.n} rows, ${row.digest}`
  }
  return out
}

/**
 * How many sessions wait for a lock that backend `holder` holds, directly or queued behind another
 * such waiter (a second waiter for one row waits for the first one's tuple lock, so only the first
 * names the holder). Waiters of other test files, which share the database, are not counted.
 */
export async function waitersOn(pool: Pick<pg.Pool, 'query'>, holder: number): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `WITH RECURSIVE waiting(pid) AS (
       SELECT pid FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))
       UNION
       SELECT a.pid FROM pg_stat_activity a JOIN waiting w ON w.pid = ANY(pg_blocking_pids(a.pid))
     )
     SELECT count(*)::int AS n FROM waiting`,
    [holder],
  )
  return rows[0]?.n ?? 0
}
