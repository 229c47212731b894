import { type ChildProcess, spawn } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { useTestEnv } from '@mailer/testing'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'

/**
 * `make dev` (scripts/dev.mjs) as a newcomer meets it on a machine that already runs things: it
 * must say so when its ports are taken, and never print "Mailer is running" over a Mailer that
 * is not (or not its own).
 */
const ROOT = join(import.meta.dirname, '..', '..')
const te = useTestEnv()
const started: ChildProcess[] = []
const servers: Server[] = []

// A schema of its own, which `make dev` migrates with `prisma migrate deploy` (the file's own
// schema is migrated without Prisma's bookkeeping, which deploy refuses).
const schema = () => `${new URL(te.databaseUrl).searchParams.get('schema')}_dev`
// Its secrets and outbox given, so that it writes nothing into the checkout's .data/.
const own = {
  ADMIN_API_KEY: 'admin_dev-script-test',
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

/** A base port with `n` free ports from it. */
async function freePorts(n: number): Promise<number> {
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * 30_000)
    const taken = await Promise.all(Array.from({ length: n }, (_, i) => inUse(base + i)))
    if (!taken.some(Boolean)) return base
  }
}

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
})
