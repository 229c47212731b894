import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createConnection, createServer, type Server } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { waitFor } from '../../testing/src/wait-for.js'
import { migrationNames } from '../src/testing.js'

/**
 * The migrate entry point (migrate/run.mjs, the Helm hook's command) when a run is cut short or a
 * migration fails: a migration is one transaction, so neither leaves part of it applied, and the
 * next run completes (or shows the migration's own error again) instead of stopping at P3009.
 * Each test migrates a schema of its own in a scratch database (Prisma's advisory lock is per
 * database: a run held up here must not hold up other files), from a copy of libs/db's config
 * and migrations with a test migration added after them.
 */
const dbDir = join(dirname(fileURLToPath(import.meta.url)), '..')
const database = `mailer_migrate_kill_${randomBytes(4).toString('hex')}`
let baseUrl = ''
const dirs: string[] = []

const withClient = async <T>(connectionString: string, fn: (c: pg.Client) => Promise<T>): Promise<T> => {
  const c = new pg.Client({ connectionString })
  await c.connect()
  try {
    return await fn(c)
  } finally {
    await c.end()
  }
}
const admin = (sql: string) => withClient(inject('databaseUrl'), (c) => c.query(sql))
const query = async <R extends pg.QueryResultRow>(sql: string, args: unknown[] = []) =>
  (await withClient(baseUrl, (c) => c.query<R>(sql, args))).rows

/** A folder inside libs/db (so the config's imports resolve) with its config and migrations plus `extra`. */
function workspace(extra: Record<string, string>): string {
  const dir = mkdtempSync(join(dbDir, 'node_modules', '.migrate-test-'))
  dirs.push(dir)
  cpSync(join(dbDir, 'prisma.config.ts'), join(dir, 'prisma.config.ts'))
  cpSync(join(dbDir, 'migrate'), join(dir, 'migrate'), { recursive: true })
  cpSync(join(dbDir, 'prisma'), join(dir, 'prisma'), { recursive: true })
  for (const [name, sql] of Object.entries(extra)) {
    mkdirSync(join(dir, 'prisma/migrations', name))
    writeFileSync(join(dir, 'prisma/migrations', name, 'migration.sql'), sql)
  }
  return dir
}

interface Run {
  child: ChildProcess
  output: () => string
  done: Promise<number>
}
/** The entry point as the Job runs it, in a process group of its own (a pod's processes die together). */
function migrate(dir: string, databaseUrl: string, env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, [join(dir, 'migrate/run.mjs')], {
    cwd: dir,
    env: { ...process.env, DATABASE_URL: databaseUrl, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (out += d))
  const done = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)))
  return { child, output: () => out, done }
}
const schemaUrl = (schema: string) => {
  const u = new URL(baseUrl)
  u.searchParams.set('schema', schema)
  return u.toString()
}
const exists = async (schema: string, name: string) =>
  (await query<{ r: string | null }>('SELECT to_regclass($1) AS r', [`"${schema}"."${name}"`]))[0]!.r !== null
const rowsOf = (schema: string, name: string) =>
  query<{ finished_at: Date | null; rolled_back_at: Date | null; logs: string | null }>(
    `SELECT finished_at, rolled_back_at, logs FROM "${schema}"."_prisma_migrations" WHERE migration_name = $1 ORDER BY started_at`,
    [name],
  )
/** Every migration of the workspace has a finished row. */
const finished = async (schema: string) =>
  (
    await query<{ migration_name: string }>(
      `SELECT migration_name FROM "${schema}"."_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY 1`,
    )
  ).map((r) => r.migration_name)

beforeAll(async () => {
  await admin(`CREATE DATABASE "${database}"`)
  const u = new URL(inject('databaseUrl'))
  u.pathname = `/${database}`
  u.search = ''
  baseUrl = u.toString()
})
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
  await admin(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`)
})

describe('migrate entry point', () => {
  it('leaves nothing of a migration killed part-way, and the next run applies it and the rest', async () => {
    const schema = 'm_killed'
    const probe = '29990101000000_probe_blocked'
    const dir = workspace({
      [probe]: [
        'CREATE TABLE "probe_before" ("id" INTEGER);',
        `INSERT INTO "probe_before" VALUES (1);`,
        'CREATE INDEX "probe_projects_idx" ON "projects" ("created_at");',
        'CREATE TABLE "probe_after" ("id" INTEGER);',
      ].join('\n'),
    })
    // The release before: every real migration, so that the table the probe needs exists.
    const first = migrate(join(dbDir), schemaUrl(schema))
    expect(await first.done, first.output()).toBe(0)

    // Another session holds `projects`: the probe's CREATE INDEX waits, after its first statements.
    const locker = new pg.Client({ connectionString: baseUrl })
    await locker.connect()
    try {
      await locker.query(`BEGIN; LOCK TABLE "${schema}"."projects" IN ACCESS EXCLUSIVE MODE`)
      const run = migrate(dir, schemaUrl(schema))
      const blocked = () =>
        query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
           AND query LIKE '%probe_projects_idx%' AND pid <> pg_backend_pid()`,
        )
      await waitFor(async () => (await blocked()).length > 0, {
        timeoutMs: 90_000,
        intervalMs: 250,
        what: 'the probe blocked',
      })
      process.kill(-run.child.pid!, 'SIGKILL') // the pod goes: OOM, deadline, node drain
      await run.done
      // PostgreSQL ends the killed client's session on its own (client_connection_check_interval),
      // rolling its transaction back while the lock is still held.
      await waitFor(async () => (await blocked()).length === 0, {
        timeoutMs: 30_000,
        intervalMs: 250,
        what: 'the killed session gone',
      }).catch(() => undefined)

      expect(await exists(schema, 'probe_before')).toBe(false)
      const rows = await rowsOf(schema, probe)
      expect(rows).toHaveLength(1)
      expect(rows[0]!.finished_at).toBeNull()
    } finally {
      await locker.end() // the lock goes with the session
    }

    const next = migrate(dir, schemaUrl(schema))
    const code = await next.done
    expect(code, next.output()).toBe(0)
    expect(next.output()).toContain(`${probe} (started`)
    expect(next.output()).toContain('marked rolled back and runs again')
    expect(next.output()).not.toContain('P3009')
    expect(await exists(schema, 'probe_before')).toBe(true)
    expect(await exists(schema, 'probe_after')).toBe(true)
    expect(await exists(schema, 'probe_projects_idx')).toBe(true)
    expect(await query(`SELECT id FROM "${schema}"."probe_before"`)).toEqual([{ id: 1 }])
    expect(await finished(schema)).toEqual([...migrationNames(), probe])
  }, 240_000)

  it('leaves nothing of a migration that fails on its SQL, and each next run shows that error again', async () => {
    const schema = 'm_failing'
    const probe = '29990101000000_probe_failing'
    const dir = workspace({
      // A `;` inside a string and a dollar-quoted body: the file is one script, not split at each.
      [probe]: [
        `CREATE TABLE "probe_first" ("note" TEXT DEFAULT 'a;b');`,
        `CREATE FUNCTION "probe_fn"() RETURNS INTEGER LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END $$;`,
        'ALTER TABLE "probe_missing" ADD COLUMN "x" INTEGER;',
      ].join('\n'),
    })
    const error = 'migrate: the script failed: 42P01 relation "probe_missing" does not exist'
    for (const attempt of [1, 2]) {
      const run = migrate(dir, schemaUrl(schema))
      expect(await run.done, run.output()).not.toBe(0)
      expect(run.output(), `attempt ${attempt}`).toContain(error)
      expect(run.output()).not.toContain('P3009')
      expect(await exists(schema, 'probe_first')).toBe(false)
      expect(await finished(schema)).toEqual(migrationNames())
    }
    const rows = await rowsOf(schema, probe)
    expect(rows.map((r) => r.rolled_back_at === null)).toEqual([false, true])
    expect(rows[1]!.logs).toContain('probe_missing')
  }, 240_000)

  it('waits for PostgreSQL to take connections, and for a migrator session still open', async () => {
    const schema = 'm_waiting'
    // A port with nothing behind it yet: PostgreSQL starting (the bundled one on first install).
    const port = await freePort()
    const late = new URL(schemaUrl(schema))
    late.host = `127.0.0.1:${port}`
    const target = new URL(baseUrl)
    // A statement of another migrator (or of a killed run) on the same schema, waiting on a lock.
    const holder = new pg.Client({ connectionString: baseUrl })
    const other = new pg.Client({ connectionString: baseUrl, application_name: `mailer-migrate ${schema}` })
    await holder.connect()
    await other.connect()
    let proxy: Server | undefined
    try {
      await holder.query('SELECT pg_advisory_lock(4242)')
      const waiting = other.query('SELECT pg_advisory_lock(4242)')
      const run = migrate(join(dbDir), late.toString())
      await waitFor(() => run.output().includes(`waiting for PostgreSQL at 127.0.0.1:${port}`), {
        timeoutMs: 30_000,
        what: 'the wait for PostgreSQL logged',
      })
      proxy = createServer((socket) => {
        const upstream = createConnection(Number(target.port || 5432), target.hostname)
        socket.pipe(upstream).pipe(socket)
        socket.on('error', () => upstream.destroy())
        upstream.on('error', () => socket.destroy())
      })
      await new Promise<void>((resolve) => proxy!.listen(port, '127.0.0.1', resolve))
      await waitFor(() => run.output().includes('migrator statements still running'), {
        timeoutMs: 60_000,
        what: 'the wait for the other migrator logged',
      })
      expect(await exists(schema, '_prisma_migrations')).toBe(false)
      await holder.query('SELECT pg_advisory_unlock(4242)')
      await waiting // now idle: a pooled or finished session, which is no reason to wait
      expect(await run.done, run.output()).toBe(0)
      expect(await finished(schema)).toEqual(migrationNames())
    } finally {
      await other.end().catch(() => undefined)
      await holder.end().catch(() => undefined)
      proxy?.close()
    }
  }, 240_000)

  it('stops at once on a refused password, naming the server', async () => {
    const u = new URL(schemaUrl('m_refused'))
    u.username = `nobody_${randomBytes(3).toString('hex')}`
    const run = migrate(join(dbDir), u.toString())
    expect(await run.done).toBe(1)
    expect(run.output()).toMatch(/cannot connect to PostgreSQL at .+\/mailer_migrate_kill_\w+: 28/)
  }, 60_000)
})

async function freePort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))
  const port = (s.address() as { port: number }).port
  await new Promise((resolve) => s.close(resolve))
  return port
}
