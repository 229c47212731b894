import { execFile, execFileSync, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { startTlsOnlyPostgres } from './tls-only-postgres.js'

/**
 * The migrations as operators apply them: `prisma migrate deploy` (the Helm hook and `make dev`)
 * on an empty database must succeed, and the migrations must produce exactly schema.prisma.
 * Tests elsewhere apply the same SQL directly for speed, so this is the one place the real tool runs.
 */
const dbDir = join(dirname(fileURLToPath(import.meta.url)), '..')
const name = `mailer_migrate_${randomBytes(4).toString('hex')}`
let url = ''

const admin = async (sql: string) => {
  const c = new pg.Client({ connectionString: inject('databaseUrl') })
  await c.connect()
  try {
    await c.query(sql)
  } finally {
    await c.end()
  }
}
const prisma = (...args: string[]) => prismaOn(url, ...args)
const prismaOn = (databaseUrl: string, ...args: string[]) =>
  execFileSync(join(dbDir, 'node_modules/.bin/prisma'), args, {
    cwd: dbDir,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })

beforeAll(async () => {
  await admin(`CREATE DATABASE "${name}"`)
  const u = new URL(inject('databaseUrl'))
  u.pathname = `/${name}`
  u.search = ''
  url = u.toString()
})
afterAll(() => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))

describe('prisma migrations', () => {
  it('apply with `prisma migrate deploy` on an empty database, and again as a no-op', () => {
    expect(prisma('migrate', 'deploy')).toContain('successfully applied')
    expect(prisma('migrate', 'deploy')).toContain('No pending migrations')
  }, 120_000)

  it('go into the schema that `?schema=` names, as the services read it, creating it if needed', async () => {
    expect(prismaOn(`${url}?schema=mailer_ops`, 'migrate', 'deploy')).toContain('successfully applied')
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    try {
      const { rows } = await c.query<{ schema: string; n: number }>(
        `SELECT table_schema AS schema, count(*)::int AS n FROM information_schema.tables
         WHERE table_name IN ('projects', 'emails', 'webhook_deliveries') GROUP BY 1 ORDER BY 1`,
      )
      // The first test put a set in public; this one adds the same set in mailer_ops.
      expect(rows).toEqual([
        { schema: 'mailer_ops', n: 3 },
        { schema: 'public', n: 3 },
      ])
    } finally {
      await c.end()
    }
  }, 120_000)

  it('reach a PostgreSQL that takes TLS connections only, verifying its certificate, as the services do with the same URL', async () => {
    // A managed database (RDS with rds.force_ssl, the PostgreSQL 15+ default there) refuses
    // clear-text sessions: the Helm hook with `?sslmode=…` in DATABASE_URL must ask for TLS, and
    // check the server's certificate against the CA the chart mounts (externalDatabase.tlsCA).
    const server = await startTlsOnlyPostgres(new URL(url))
    try {
      const tlsUrl = new URL(url)
      tlsUrl.host = `127.0.0.1:${server.port}`
      tlsUrl.search = new URLSearchParams({
        sslmode: 'verify-full',
        sslrootcert: server.caFile,
        schema: 'mailer_tls',
      }).toString()
      const out = await new Promise<string>((resolve, reject) =>
        execFile(
          join(dbDir, 'node_modules/.bin/prisma'),
          ['migrate', 'deploy'],
          { cwd: dbDir, env: { ...process.env, DATABASE_URL: tlsUrl.toString() }, encoding: 'utf8' },
          (err, stdout, stderr) => (err ? reject(new Error(`${stdout}${stderr}`)) : resolve(stdout)),
        ),
      )
      expect(out).toContain('successfully applied')
      const c = new pg.Client({ connectionString: url })
      await c.connect()
      try {
        const { rows } = await c.query(
          `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'mailer_tls' AND table_name = 'emails'`,
        )
        expect(rows).toEqual([{ n: 1 }])
      } finally {
        await c.end()
      }
    } finally {
      await server.close()
    }
  }, 120_000)

  it('name a missing DATABASE_URL, and generate the client without one', () => {
    // Prisma 6.19 alone answers a missing DATABASE_URL by downloading a native engine: offline,
    // `make migrate` or `pnpm generate` failed with "getaddrinfo ENOTFOUND binaries.prisma.sh".
    const env: NodeJS.ProcessEnv = { ...process.env }
    delete env.DATABASE_URL
    const run = (...args: string[]) =>
      spawnSync(join(dbDir, 'node_modules/.bin/prisma'), args, { cwd: dbDir, env, encoding: 'utf8' })
    const status = run('migrate', 'status')
    expect(status.status).not.toBe(0)
    expect(status.stdout + status.stderr).toContain('DATABASE_URL is not set')
    expect(status.stdout + status.stderr).not.toContain('binaries.prisma.sh')

    // `generate` never connects: it works without one (into a directory of its own, so that the
    // client the other tests load is left alone; inside the package, or Prisma installs itself).
    const dir = mkdtempSync(join(dbDir, 'node_modules', '.generate-'))
    try {
      const schema = readFileSync(join(dbDir, 'prisma/schema.prisma'), 'utf8')
      const output = 'output     = "../src/generated/client"'
      expect(schema).toContain(output)
      writeFileSync(join(dir, 'schema.prisma'), schema.replace(output, `output = "${join(dir, 'client')}"`))
      const generate = run('generate', '--schema', join(dir, 'schema.prisma'))
      expect(generate.stdout + generate.stderr).not.toContain('binaries.prisma.sh')
      expect(generate.status).toBe(0)
      expect(existsSync(join(dir, 'client/index.js'))).toBe(true)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)

  it('produce exactly the schema in schema.prisma (no drift)', () => {
    // The migrations replayed into a shadow database, compared with the schema file.
    const diff = prisma(
      'migrate',
      'diff',
      '--from-migrations',
      'prisma/migrations',
      '--to-schema-datamodel',
      'prisma/schema.prisma',
      '--script',
    )
    expect(diff.replace(/--.*$/gm, '').trim()).toBe('')
  }, 120_000)
})
