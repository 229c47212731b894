// The migration entry point: the Helm hook Job and `pnpm --filter @mailer/db migrate` run this
// (cwd: the folder holding prisma.config.ts) rather than `prisma migrate deploy` itself.
//   1. waits for PostgreSQL to take connections (the bundled one may still be starting: the Job
//      burnt its retries on "connection refused"), with back-off, for MIGRATE_WAIT_SECONDS;
//   2. waits while another migrator runs on the same schema (this script in another pod, or a
//      statement of a killed run that PostgreSQL has not yet ended);
//   3. marks migrations an earlier run left unfinished as rolled back, so that they run again:
//      each migration is one transaction (atomic-script.mjs), so an unfinished one applied
//      nothing. Prisma would otherwise refuse every later deploy with P3009, and the Job's
//      retries would show that instead of what went wrong;
//   4. runs `prisma migrate deploy` and exits with its status. A migration failing on its own SQL
//      fails each try with the database's error.
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { migratorName, quoteIdent } from './atomic-script.mjs'

const log = (message) => console.log(`migrate: ${message}`)
const fail = (message) => {
  console.error(`migrate: ${message}`)
  process.exit(1)
}

if (!process.env.DATABASE_URL)
  fail('DATABASE_URL is not set, e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/mailer')
const url = new URL(process.env.DATABASE_URL)
const schema = url.searchParams.get('schema') ?? 'public'
url.searchParams.delete('schema')
url.searchParams.set('application_name', 'mailer-migrate-run')
const waitSeconds = Number(process.env.MIGRATE_WAIT_SECONDS ?? 300)
if (!Number.isFinite(waitSeconds) || waitSeconds < 0) fail('MIGRATE_WAIT_SECONDS must be a number of seconds')
const where = `${url.hostname}:${url.port || 5432}${url.pathname}`

/** Connection errors that waiting does not cure: wrong password, no such database or user. */
const final = (error) => /^28|^3D000$/.test(error.code ?? '')

async function connect() {
  const deadline = Date.now() + waitSeconds * 1000
  for (let attempt = 1, delay = 1; ; attempt++, delay = Math.min(delay * 2, 10)) {
    const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 10_000 })
    try {
      await client.connect()
      if (attempt > 1) log(`PostgreSQL at ${where} answers`)
      return client
    } catch (error) {
      await client.end().catch(() => undefined)
      const why = `${error.code ? `${error.code} ` : ''}${error.message}`
      if (final(error)) fail(`cannot connect to PostgreSQL at ${where}: ${why}`)
      if (Date.now() + delay * 1000 > deadline)
        fail(
          `PostgreSQL at ${where} did not take connections within ${waitSeconds} s (MIGRATE_WAIT_SECONDS): ${why}`,
        )
      log(`waiting for PostgreSQL at ${where} (try ${attempt}: ${why}); next try in ${delay} s`)
      await sleep(delay * 1000)
    }
  }
}

/** Polls `check` (null when clear, else what to log) every 2 s, logging every 30 s, for waitSeconds. */
async function waitWhile(check, what) {
  const deadline = Date.now() + waitSeconds * 1000
  let lastLog = 0
  for (;;) {
    const busy = await check()
    if (!busy) return
    if (Date.now() > deadline) fail(`${what} still after ${waitSeconds} s (MIGRATE_WAIT_SECONDS): ${busy}`)
    if (Date.now() - lastLog >= 30_000) {
      log(`waiting: ${busy}`)
      lastLog = Date.now()
    }
    await sleep(2000)
  }
}

const db = await connect()
db.on('error', (error) => fail(`lost the connection to PostgreSQL: ${error.message}`))

// One run per schema at a time, this script's instances among themselves. The lock is held by a
// transaction left open on a connection of its own until exit: a session-level lock would stay
// behind on a server connection of a PgBouncer in transaction mode, and hold up the next run.
const holder = await connect()
holder.on('error', (error) => log(`the connection holding the migration lock failed: ${error.message}`))
await holder.query('BEGIN')
await waitWhile(async () => {
  const { rows } = await holder.query(
    `SELECT pg_try_advisory_xact_lock(hashtext('mailer-migrate'), hashtext($1)) AS ok`,
    [schema],
  )
  return rows[0].ok ? null : `another migration run on schema "${schema}" holds its lock`
}, 'another migration run')

// A statement of another migrator, or of a killed run that PostgreSQL has not yet noticed is gone
// (a statement waiting on a lock notices only on PostgreSQL 14+, through
// client_connection_check_interval). Idle sessions are left alone: a killed client's idle session
// closes at once, and a PgBouncer keeps the name on the server connections it pools.
await waitWhile(async () => {
  const { rows } = await db.query(
    `SELECT pid, state, wait_event_type, wait_event, extract(epoch FROM now() - query_start)::int AS seconds,
       left(query, 80) AS query
     FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database() AND state <> 'idle'`,
    [migratorName(schema)],
  )
  return rows.length === 0
    ? null
    : `migrator statements still running in PostgreSQL: ${rows
        .map(
          (r) =>
            `pid ${r.pid} ${r.state}${r.wait_event ? ` waiting on ${r.wait_event_type}/${r.wait_event}` : ''} for ${r.seconds} s: ${JSON.stringify(r.query)}`,
        )
        .join('; ')} (pg_terminate_backend(pid) ends one left over from a killed run)`
}, 'migrator statements')

const table = `${quoteIdent(schema)}."_prisma_migrations"`
const { rows: present } = await db.query('SELECT to_regclass($1) IS NOT NULL AS present', [table])
if (present[0].present) {
  const { rows } = await db.query(
    `UPDATE ${table} SET rolled_back_at = now() WHERE finished_at IS NULL AND rolled_back_at IS NULL
     RETURNING migration_name, started_at, logs`,
  )
  for (const r of rows)
    log(
      `${r.migration_name} (started ${r.started_at.toISOString()}) did not finish; it is marked rolled back ` +
        `and runs again (a migration is one transaction, so nothing of it was applied if it ran under this ` +
        `runner; one an older release left part-applied may fail again: docs/operations.md, Upgrade)${
          r.logs ? `. It had failed with:\n${r.logs}` : ' (its run was interrupted)'
        }`,
    )
}

await db.end()

const prisma = createRequire(import.meta.url).resolve('prisma/build/index.js')
const child = spawn(process.execPath, [prisma, 'migrate', 'deploy'], { stdio: 'inherit' })
// PID 1 of a container ignores SIGTERM without a handler: pass it on, so that the Job stops.
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal))
const code = await new Promise((resolve) => {
  child.on('error', (error) => fail(`cannot run ${prisma}: ${error.message}`))
  child.on('exit', (status, signal) => resolve(status ?? (signal ? 1 : 0)))
})
await holder.query('COMMIT').catch(() => undefined)
process.exit(code)
