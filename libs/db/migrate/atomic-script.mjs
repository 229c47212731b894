// A migration file runs as one transaction. adapter-pg 6.19's own executeScript splits the file at
// every `;` and sends each piece to its pool: a run killed part-way (the Job's deadline, OOM, a node
// drain, Helm replacing the hook Job) left some statements applied and Prisma's row unfinished,
// and every later `migrate deploy` then stopped at P3009; a `;` in a string or a `$$` body broke
// the file apart. Here the whole file goes as one simple-protocol query on a connection of its
// own, which PostgreSQL runs as one implicit transaction: an error or a kill leaves nothing of it.
import { createHash } from 'node:crypto'

/**
 * The application_name of every connection Prisma opens for migrations into `schema`, so that
 * the migrate entry point (run.mjs) sees a migration still running, or a session left behind by
 * a killed run, in pg_stat_activity. PostgreSQL keeps 63 bytes of it.
 */
export const migratorName = (schema) => `mailer-migrate ${schema}`.slice(0, 63)

export const quoteIdent = (name) => `"${name.replaceAll('"', '""')}"`

/**
 * Runs `script` on a dedicated connection of `pool` in one go. When it is a migration Prisma has
 * just recorded as started in `schema` (Prisma's checksum is the SHA-256 of the file), the
 * row's completion is appended to the script, so it commits in the same transaction: a row left
 * unfinished always means that nothing of its migration was applied.
 */
export async function runScriptAtomically(pool, script, schema) {
  const client = await pool.connect()
  let failed
  try {
    // A killed migrator's session is noticed while it waits on a lock or builds an index (PG 14+),
    // and its transaction rolled back, rather than committing once it gets its turn.
    await client.query(
      `SELECT set_config('client_connection_check_interval', '2000', false) WHERE current_setting('server_version_num')::int >= 140000`,
    )
    await client.query(script + (schema ? await completion(client, script, schema) : ''))
  } catch (error) {
    failed = error
    // Prisma's report keeps the error's kind only ("No such table: x"): the database's own words
    // and the line of the file go to the log as well.
    console.error(describe(error, script))
    throw error
  } finally {
    // Never back to the pool: a SET in the script would follow Prisma's own queries.
    client.release(failed ?? true)
  }
}

async function completion(client, script, schema) {
  const table = `${quoteIdent(schema)}."_prisma_migrations"`
  const { rows } = await client.query(`SELECT to_regclass($1) IS NOT NULL AS present`, [table])
  if (!rows[0].present) return '' // a shadow database, CREATE/DROP DATABASE, a first CREATE SCHEMA
  const checksum = createHash('sha256').update(script).digest('hex')
  const found = await client.query(
    `SELECT id FROM ${table} WHERE checksum = $1 AND finished_at IS NULL AND rolled_back_at IS NULL
     ORDER BY started_at DESC LIMIT 1`,
    [checksum],
  )
  if (found.rows.length === 0) return ''
  const id = found.rows[0].id.replaceAll("'", "''")
  // After a line break (the file may end in a `--` comment) and a `;` (or without its last one).
  // applied_steps_count is left to Prisma, which adds one to it next.
  return `\n;\nUPDATE ${table} SET finished_at = now() WHERE id = '${id}'`
}

function describe(error, script) {
  const at = Number(error.position)
  const line = at > 0 ? ` at line ${script.slice(0, at - 1).split('\n').length}` : ''
  const more = [error.detail && `DETAIL: ${error.detail}`, error.hint && `HINT: ${error.hint}`]
  return [`migrate: the script failed${line}: ${error.code ? `${error.code} ` : ''}${error.message}`, ...more]
    .filter(Boolean)
    .join('\n')
}
