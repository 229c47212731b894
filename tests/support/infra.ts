import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { waitFor } from '@mailer/testing/wait-for'

// Private PostgreSQL and NATS servers for the bench and the fault tests: their own ports and data
// directories, so a run can kill and restart them (or load them hard) without touching the
// machine's shared instances on 5432 and 4222.

/** A free TCP port on 127.0.0.1 (asked of the kernel, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })
}

export function tcpOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = netConnect({ host: '127.0.0.1', port }, () => {
      s.destroy()
      resolve(true)
    })
    s.on('error', () => resolve(false))
  })
}

/** `waitFor` with the label first, as the fault runner and the bench read best. */
export const until = <T>(
  what: string,
  check: () => Promise<T> | T,
  timeoutMs = 30_000,
): Promise<NonNullable<T>> => waitFor(check, { what, timeoutMs, intervalMs: 100 })

/** `nats-server -js -p <port> -sd <dir>` on 127.0.0.1; can be killed and started again on the same store. */
export class PrivateNats {
  private proc: ChildProcess | null = null
  readonly dir = mkdtempSync(join(tmpdir(), 'mailer-nats-'))
  private constructor(
    readonly port: number,
    private readonly args: string[],
  ) {}

  /** `args`: extra server flags, e.g. `['--user', 'u', '--pass', 'p']` for a server that needs a login. */
  static async start(args: string[] = []): Promise<PrivateNats> {
    const n = new PrivateNats(await freePort(), args)
    // The server of the moment (up() after a kill() starts a new one).
    onExit(() => n.proc?.kill('SIGKILL'))
    await n.up()
    return n
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`
  }

  get pid(): number | null {
    return this.proc?.pid ?? null
  }

  /** Starts the server unless it is running (a second one would lose track of the first). */
  async up(): Promise<void> {
    if (this.proc && this.proc.exitCode === null && this.proc.signalCode === null) return
    if (spawnSync('sh', ['-c', 'command -v nats-server']).status !== 0)
      throw new Error('nats-server is not installed (apt-get install nats-server)')
    this.proc = spawn(
      'nats-server',
      ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.dir, ...this.args],
      {
        stdio: 'ignore',
      },
    )
    await until('nats-server to listen', () => tcpOpen(this.port), 15_000)
  }

  /** SIGKILL: no flush, no goodbye; JetStream recovers from its store at the next `up()`. */
  async kill(): Promise<void> {
    const p = this.proc
    if (!p || p.exitCode !== null || p.signalCode !== null) return
    const exited = new Promise((r) => p.once('exit', r))
    p.kill('SIGKILL')
    await exited
  }

  async stop(): Promise<void> {
    const p = this.proc
    if (p && p.exitCode === null && p.signalCode === null) {
      const exited = new Promise((r) => p.once('exit', r))
      p.kill('SIGTERM')
      await exited
    }
    rmSync(this.dir, { recursive: true, force: true })
  }
}

/** The newest PostgreSQL server binaries installed from the OS packages, or null. */
export function postgresBin(): string | null {
  const base = '/usr/lib/postgresql'
  if (!existsSync(base)) return null
  const versions = readdirSync(base).sort((a, b) => Number(b) - Number(a))
  for (const v of versions) if (existsSync(join(base, v, 'bin', 'initdb'))) return join(base, v, 'bin')
  return null
}

/**
 * A private PostgreSQL cluster (initdb into a temp dir, its own port; trust auth unless a password
 * is given). As root it runs as the `postgres` user, which PostgreSQL insists on. `restart()` is a
 * crash-like stop (`-m immediate`: no checkpoint, clients cut) followed by a start with WAL recovery.
 */
export class PrivatePostgres {
  readonly dir = mkdtempSync(join(tmpdir(), 'mailer-pg-'))
  private constructor(
    private readonly bin: string,
    readonly port: number,
    private readonly settings: string[],
    private readonly password?: string,
  ) {}

  /**
   * `settings`: extra server settings (`name=value`), e.g. to preload pg_stat_statements.
   * `password`: the superuser's, required over TCP (scram-sha-256, as a stock Debian server
   * asks); the socket stays trusted.
   */
  static async start(settings: string[] = [], opts: { password?: string } = {}): Promise<PrivatePostgres> {
    const bin = postgresBin()
    if (!bin)
      throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)')
    const pg = new PrivatePostgres(bin, await freePort(), settings, opts.password)
    if (process.getuid?.() === 0) chownSync(pg.dir, uid('postgres'), gid('postgres'))
    if (opts.password === undefined) {
      pg.run('initdb', ['-D', pg.dir, '-U', 'postgres', '--auth=trust', '--no-sync'])
    } else {
      // initdb reads the password from a file (the `postgres` user's to read, outside the data dir).
      const pwDir = mkdtempSync(join(tmpdir(), 'mailer-pgpw-'))
      const pwFile = join(pwDir, 'pw')
      writeFileSync(pwFile, `${opts.password}\n`, { mode: 0o600 })
      if (process.getuid?.() === 0) {
        chownSync(pwDir, uid('postgres'), gid('postgres'))
        chownSync(pwFile, uid('postgres'), gid('postgres'))
      }
      try {
        pg.run('initdb', [
          '-D',
          pg.dir,
          '-U',
          'postgres',
          '--auth-local=trust',
          '--auth-host=scram-sha-256',
          `--pwfile=${pwFile}`,
          '--no-sync',
        ])
      } finally {
        rmSync(pwDir, { recursive: true, force: true })
      }
    }
    onExit(() => {
      if (!existsSync(join(pg.dir, 'postmaster.pid'))) return
      try {
        pg.run('pg_ctl', ['-D', pg.dir, '-m', 'immediate', '-w', 'stop'])
      } catch {
        /* not running */
      }
    })
    await pg.up()
    return pg
  }

  get url(): string {
    const login = this.password === undefined ? 'postgres' : `postgres:${encodeURIComponent(this.password)}`
    return `postgres://${login}@127.0.0.1:${this.port}/postgres`
  }

  /** The postmaster's pid (its backends are its children), from postmaster.pid. */
  get pid(): number | null {
    try {
      return Number(readFileSync(join(this.dir, 'postmaster.pid'), 'utf8').split('\n')[0])
    } catch {
      return null
    }
  }

  private run(tool: string, args: string[]): void {
    runPgTool(this.bin, tool, args)
  }

  async up(): Promise<void> {
    const extra = this.settings.map((x) => ` -c ${x}`).join('')
    const opts = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c max_connections=200${extra}`
    this.run('pg_ctl', ['-D', this.dir, '-o', opts, '-l', join(this.dir, 'server.log'), '-w', 'start'])
    await until('PostgreSQL to listen', () => tcpOpen(this.port), 30_000)
  }

  /** Stops at once, like a crash (`immediate`: no shutdown checkpoint; recovery replays the WAL). */
  async crash(): Promise<void> {
    this.run('pg_ctl', ['-D', this.dir, '-m', 'immediate', '-w', 'stop'])
  }

  async stop(): Promise<void> {
    try {
      this.run('pg_ctl', ['-D', this.dir, '-m', 'fast', '-w', 'stop'])
    } catch {
      /* already stopped */
    }
    rmSync(this.dir, { recursive: true, force: true })
  }
}

function runPgTool(bin: string, tool: string, args: string[]): void {
  const cmd = join(bin, tool)
  const argv = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', cmd, ...args] : [cmd, ...args]
  execFileSync(argv[0]!, argv.slice(1), { stdio: 'ignore' })
}

/** Stops (`-m immediate`) a cluster that something else started in `dir`, if it runs. */
export function stopPostgresIn(dir: string): void {
  const bin = postgresBin()
  if (!bin || !existsSync(join(dir, 'postmaster.pid'))) return
  try {
    runPgTool(bin, 'pg_ctl', ['-D', dir, '-m', 'immediate', '-w', 'stop'])
  } catch {
    /* not running */
  }
}

const idOf = (flag: '-u' | '-g', name: string) => Number(execFileSync('id', [flag, name]).toString().trim())
const uid = (name: string) => idOf('-u', name)
const gid = (name: string) => idOf('-g', name)

const exitHooks = new Set<() => void>()
/**
 * Runs `hook` (synchronous work only) when this process exits, however it ends: a harness that
 * dies (an uncaught error in a bench or fault run) must not leave servers and services running
 * and eating the machine's CPU behind it. Registered once per object; idempotent hooks only.
 */
export function onExit(hook: () => void): void {
  if (exitHooks.size === 0)
    process.once('exit', () => {
      for (const h of exitHooks) h()
    })
  exitHooks.add(hook)
}

/**
 * Waits for `p` for at most `ms`: true when it settled in time, false when it did not (it goes
 * on unobserved). A rejection in time is thrown. Bounds teardown steps on a loaded machine.
 */
export async function settleWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms)
  })
  try {
    return await Promise.race([p.then(() => true as const), late])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * A TCP front door to another port on 127.0.0.1 that a test can cut: every connection through it,
 * open or new, is dropped until `restore()`. Gives one client (a service's NATS connection) an
 * outage of its own while everything else stays connected. `hang()` keeps connections open but
 * passes nothing on: a server that stopped answering.
 */
export class TcpProxy {
  private readonly open = new Set<Socket>()
  private down = false
  private hung = false
  /** Connections clients opened to the proxy, refused ones (`cut()`) included. */
  connections = 0
  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** `delayMs`: each chunk is passed on that much later, both ways (a slow network path). */
  static async start(targetPort: number, delayMs = 0): Promise<TcpProxy> {
    let proxy!: TcpProxy
    const server = createServer((client) => {
      proxy.connections++
      if (proxy.down) {
        client.destroy()
        return
      }
      const upstream = netConnect({ host: '127.0.0.1', port: targetPort })
      for (const s of [client, upstream]) {
        proxy.open.add(s)
        s.on('close', () => proxy.open.delete(s))
        s.on('error', () => undefined)
      }
      const forward = (from: Socket, to: Socket) =>
        from.on('data', (chunk) => {
          if (proxy.hung) return
          if (delayMs === 0) to.write(chunk)
          else setTimeout(() => to.writable && to.write(chunk), delayMs)
        })
      forward(client, upstream)
      forward(upstream, client)
      client.on('close', () => upstream.destroy())
      upstream.on('close', () => client.destroy())
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    proxy = new TcpProxy(server, (server.address() as { port: number }).port)
    return proxy
  }

  cut(): void {
    this.down = true
    for (const s of this.open) s.destroy()
  }

  /**
   * Open and new connections stay open and nothing is passed on, until `restore()`; what was held
   * meanwhile is dropped, so `cut()` first to end the connections it left mid-exchange.
   */
  hang(): void {
    this.hung = true
  }

  restore(): void {
    this.down = false
    this.hung = false
  }

  async close(): Promise<void> {
    this.cut()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}
