import { type ChildProcess, spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { useTestEnv } from '@mailer/testing'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { freePort, PrivatePostgres, stopPostgresIn } from '../support/infra.js'

/**
 * `make dev` (scripts/dev.mjs) as a newcomer meets it on a machine that already runs things: it
 * must say so when its ports are taken, and never print "Mailer is running" over a Mailer that
 * is not (or not its own).
 */
const ROOT = join(import.meta.dirname, '..', '..')
const te = useTestEnv()
const started: ChildProcess[] = []
const servers: Server[] = []
const clusters: PrivatePostgres[] = []
const dataDirs: string[] = []

// A schema of its own, which `make dev` migrates with `prisma migrate deploy` (the file's own
// schema is migrated without Prisma's bookkeeping, which deploy refuses).
const schema = () => `${new URL(te.databaseUrl).searchParams.get('schema')}_dev`
// Its secrets and outbox given, so that it writes nothing into the checkout's .data/.
const own = {
  ADMIN_API_KEY: 'admin_dev-script-test-key',
  TRACKING_SECRET: 'dev-script-test-tracking-secret-0123456789',
  MAIL_OUTBOX_DIR: join(tmpdir(), 'mailer-dev-script-outbox'),
}
const databaseUrl = () => {
  const u = new URL(te.databaseUrl)
  u.searchParams.set('schema', schema())
  return u.toString()
}

afterAll(async () => {
  // Each run is its own process group: whatever it started goes with it.
  for (const p of started)
    try {
      process.kill(-p.pid!, 'SIGKILL')
    } catch {}
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))))
  // The cluster a make dev started in its data dir (its own Ctrl-C stops it; a failed test may not).
  for (const d of dataDirs) {
    stopPostgresIn(join(d, 'pg'))
    rmSync(d, { recursive: true, force: true })
  }
  for (const c of clusters) await c.stop()
  const u = new URL(te.databaseUrl)
  u.search = ''
  const c = new pg.Client({ connectionString: u.toString() })
  await c.connect()
  await c.query(`DROP SCHEMA IF EXISTS "${schema()}" CASCADE`).finally(() => c.end())
})

const inUse = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect({ host: '127.0.0.1', port }, () => {
      s.destroy()
      resolve(true)
    })
    s.on('error', () => resolve(false))
  })

/**
 * A base port with `n` free ports from it, below Linux's ephemeral range (32768-60999): a port
 * there may be taken by an outgoing connection between this check and the services' listen.
 */
async function freePorts(n: number): Promise<number> {
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * 12_000)
    const taken = await Promise.all(Array.from({ length: n }, (_, i) => inUse(base + i)))
    if (!taken.some(Boolean)) return base
  }
}

/** A PostgreSQL that wants a password over TCP, as a stock Debian/Ubuntu server does. */
let guarded: Promise<PrivatePostgres> | undefined
const guardedPostgres = () => {
  guarded ??= PrivatePostgres.start([], { password: 'dev-script-pg-secret' }).then((c) => {
    clusters.push(c)
    return c
  })
  return guarded
}

/** A data dir of its own instead of the checkout's .data/ (the `postgres` user must reach it). */
function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'mailer-dev-data-'))
  chmodSync(d, 0o755)
  dataDirs.push(d)
  return d
}

const STACK_TRACE = /^\s+at /m

/** Runs `node scripts/dev.mjs` until it exits or prints the banner. */
function dev(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const proc = spawn(process.execPath, ['scripts/dev.mjs'], {
    cwd: ROOT,
    env: { ...process.env, ...te.env, ...own, DATABASE_URL: databaseUrl(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  started.push(proc)
  let output = ''
  return new Promise((resolve) => {
    const done = (code: number | null) => resolve({ code, output })
    for (const s of [proc.stdout, proc.stderr])
      s.on('data', (d) => {
        output += d
        // The old script went on running past a dead gateway or service: what it printed is the answer.
        if (output.includes('Mailer is running')) done(null)
      })
    proc.once('exit', (code) => done(code))
  })
}

describe('make dev', () => {
  it('stops at once, naming the port, when another server holds its PORT', async () => {
    // Another Mailer (another make dev) on the port: /health answers 200 from it.
    const other = createServer((_req, res) => res.end('{"ok":true}'))
    servers.push(other)
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r))
    const port = (other.address() as { port: number }).port
    const metrics = await freePorts(7)
    const { code, output } = await dev({ PORT: String(port), METRICS_PORT: String(metrics) })
    expect(output).not.toContain('Mailer is running')
    expect(output).toContain(`port ${port} (PORT, the API) is in use`)
    expect(code).toBe(1)
    // Nothing was started or migrated.
    expect(output).not.toContain('applying migrations')
  }, 120_000)

  it('starts, says what it uses without printing passwords, and stops everything on Ctrl-C', async () => {
    const base = await freePorts(8)
    const proc = spawn(process.execPath, ['scripts/dev.mjs'], {
      cwd: ROOT,
      env: {
        ...process.env,
        ...te.env,
        ...own,
        DATABASE_URL: databaseUrl(),
        PORT: String(base),
        METRICS_PORT: String(base + 1),
        SMTP_URL: 'smtp://mailer:s3cret-pass@127.0.0.1:2525',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    started.push(proc)
    let output = ''
    const exited = new Promise<number | null>((r) => proc.once('exit', r))
    await new Promise<void>((resolve, reject) => {
      for (const s of [proc.stdout, proc.stderr])
        s.on('data', (d) => {
          output += d
          if (output.includes('Press Ctrl-C')) resolve()
        })
      exited.then(() => reject(new Error(`make dev ended before starting:\n${output}`)))
    })
    expect(output).toContain(`base URL:   http://localhost:${base}`)
    expect(output).toContain('relay:      smtp://mailer:***@127.0.0.1:2525')
    // Which PostgreSQL (database and schema) and NATS (prefix) it works in, on a shared server.
    expect(output).toContain(`PostgreSQL ${databaseUrl()}`)
    expect(output).toContain(`prefix ${te.natsPrefix}`)
    expect(output).not.toContain('s3cret-pass')
    expect((await fetch(`http://localhost:${base}/health`)).status).toBe(200)

    // Ctrl-C: the terminal sends SIGINT to the whole process group.
    process.kill(-proc.pid!, 'SIGINT')
    expect(await exited).toBe(0)
    const held = await Promise.all(Array.from({ length: 8 }, (_, i) => inUse(base + i)))
    expect(held.some(Boolean)).toBe(false)
  }, 180_000)

  it('stops every service and exits 1 when one of them dies', async () => {
    const base = await freePorts(8)
    const { code, output } = await dev({
      PORT: String(base),
      METRICS_PORT: String(base + 1),
      RATE_PERIOD: '30', // the email service refuses it at start (exit 78)
    })
    expect(output).not.toContain('Mailer is running')
    expect(output).toMatch(/email exited \(78\); stopping the others/)
    expect(code).toBe(1)
    // Its ports are free again: every service it started has stopped.
    const held = await Promise.all(Array.from({ length: 8 }, (_, i) => inUse(base + i)))
    expect(held.some(Boolean)).toBe(false)
  }, 120_000)

  it('starts its own PostgreSQL, saying why in one line, when the one on the default port wants a password', async () => {
    const guarded = await guardedPostgres()
    const ownPort = await freePort()
    const base = await freePorts(8)
    const proc = spawn(process.execPath, ['scripts/dev.mjs'], {
      cwd: ROOT,
      env: {
        ...process.env,
        ...te.env,
        ...own,
        DATABASE_URL: '', // none: make dev looks on the default port
        DEV_PG_PORT: String(guarded.port),
        DEV_OWN_PG_PORT: String(ownPort),
        DEV_DATA_DIR: dataDir(),
        PORT: String(base),
        METRICS_PORT: String(base + 1),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    started.push(proc)
    let output = ''
    const exited = new Promise<number | null>((r) => proc.once('exit', r))
    await new Promise<void>((resolve, reject) => {
      for (const s of [proc.stdout, proc.stderr])
        s.on('data', (d) => {
          output += d
          if (output.includes('Press Ctrl-C')) resolve()
        })
      exited.then(() => reject(new Error(`make dev ended before starting:\n${output}`)))
    })
    expect(output).not.toMatch(STACK_TRACE)
    const why = output.split('\n').filter((l) => l.includes(`127.0.0.1:${guarded.port}`))
    expect(why).toHaveLength(1)
    expect(why[0]).toContain(`PostgreSQL on 127.0.0.1:${guarded.port} wants a password for user postgres`)
    expect(why[0]).toContain(`DATABASE_URL=postgres://USER:PASSWORD@127.0.0.1:${guarded.port}/postgres`)
    expect(output).toContain(`started PostgreSQL on 127.0.0.1:${ownPort}`)
    expect(output).toContain(`PostgreSQL postgres://postgres@127.0.0.1:${ownPort}/mailer`)
    expect((await fetch(`http://localhost:${base}/health`)).status).toBe(200)
    // Nothing was created on the server that refused it.
    const c = new pg.Client({ connectionString: guarded.url })
    await c.connect()
    const { rowCount } = await c
      .query(`SELECT 1 FROM pg_database WHERE datname = 'mailer'`)
      .finally(() => c.end())
    expect(rowCount).toBe(0)

    process.kill(-proc.pid!, 'SIGINT')
    expect(await exited).toBe(0)
    // Its own PostgreSQL stopped with it.
    expect(await inUse(ownPort)).toBe(false)
  }, 240_000)

  it('exits 1 with that line, and no stack trace, when it cannot start a PostgreSQL of its own either', async () => {
    const guarded = await guardedPostgres()
    // Its own cluster's port is taken.
    const other = createServer((_req, res) => res.end())
    servers.push(other)
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r))
    const ownPort = (other.address() as { port: number }).port
    const base = await freePorts(8)
    const { code, output } = await dev({
      DATABASE_URL: '',
      DEV_PG_PORT: String(guarded.port),
      DEV_OWN_PG_PORT: String(ownPort),
      DEV_DATA_DIR: dataDir(),
      PORT: String(base),
      METRICS_PORT: String(base + 1),
    })
    expect(output).not.toMatch(STACK_TRACE)
    expect(output).toContain(`PostgreSQL on 127.0.0.1:${guarded.port} wants a password for user postgres`)
    expect(output).toContain(`port ${ownPort} is in use`)
    expect(output).not.toContain('applying migrations')
    expect(code).toBe(1)
  }, 120_000)

  it('exits 1 with one line, and no stack trace, when DATABASE_URL has the wrong password', async () => {
    const guarded = await guardedPostgres()
    const base = await freePorts(8)
    const { code, output } = await dev({
      DATABASE_URL: `postgres://postgres:not-the-password@127.0.0.1:${guarded.port}/postgres`,
      DEV_DATA_DIR: dataDir(),
      PORT: String(base),
      METRICS_PORT: String(base + 1),
    })
    expect(output).not.toMatch(STACK_TRACE)
    expect(output).toContain(
      `could not apply the migrations to postgres://postgres:***@127.0.0.1:${guarded.port}/postgres (see above): is DATABASE_URL right?`,
    )
    expect(output).not.toContain('not-the-password')
    expect(code).toBe(1)
  }, 120_000)
})
