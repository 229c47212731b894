import { randomBytes } from 'node:crypto'
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { createMigratedSchema } from '@mailer/db/testing'
import pg from 'pg'
import { freePort, PrivateNats, PrivatePostgres } from '../support/infra.js'
import { type ServiceName, ServiceProcess } from '../support/service-process.js'
import { TestRelay } from '../support/smtp-relay.js'
import { FaultReceiver } from './receiver.js'

const ROOT = join(import.meta.dirname, '..', '..')

function ensureLogDir(): string {
  const dir = join(ROOT, '.data', 'faults-logs')
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  return dir
}

export const SERVICES: ServiceName[] = ['auth', 'email', 'dispatcher', 'webhook', 'gateway']

/**
 * Everything the fault run needs, all private to it: PostgreSQL and NATS on their own ports
 * (killed and restarted at will), the five services as child processes, a real SMTP relay that can
 * go down, and two webhook receivers, one of which can go away. Retry and take-over times are shortened (and
 * reported) so that recovery fits in minutes; the mechanisms are the production ones.
 */
export class Platform {
  readonly procs = new Map<ServiceName, ServiceProcess>()
  readonly adminKey = `faults-admin-${randomBytes(8).toString('hex')}`
  /** Every service's log lines (info and up), kept after the run for a look at what happened. */
  readonly logDir = ensureLogDir()
  env: Record<string, string> = {}
  gatewayUrl = ''
  private pool!: pg.Pool

  private constructor(
    readonly pg: PrivatePostgres,
    readonly nats: PrivateNats,
    readonly relay: TestRelay,
    readonly receiver: FaultReceiver,
    readonly filtered: FaultReceiver,
  ) {}

  /** Every webhook endpoint of the run. */
  get receivers(): FaultReceiver[] {
    return [this.receiver, this.filtered]
  }

  static async start(): Promise<Platform> {
    const [pgs, nats, relay] = await Promise.all([
      PrivatePostgres.start(),
      PrivateNats.start(),
      TestRelay.start(),
    ])
    // Two webhooks: one for every event (its receiver is the one taken down), one for two types
    // (it stays up: one receiver's outage must not hold back another's deliveries).
    const receiver = new FaultReceiver(await freePort(), ['*'])
    const filtered = new FaultReceiver(await freePort(), ['email.sent', 'email.delivered'])
    await Promise.all([receiver.up(), filtered.up()])
    const p = new Platform(pgs, nats, relay, receiver, filtered)
    const databaseUrl = await createMigratedSchema(pgs.url, 'faults')
    const port = await freePort()
    p.gatewayUrl = `http://127.0.0.1:${port}`
    p.env = {
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      DATABASE_URL: databaseUrl,
      NATS_URL: nats.url,
      ADMIN_API_KEY: p.adminKey,
      PORT: String(port),
      PUBLIC_URL: p.gatewayUrl,
      TRACKING_SECRET: randomBytes(24).toString('hex'),
      RATE_LIMIT: '1000000',
      DOMAIN_VERIFICATION: 'skip',
      MAIL_TRANSPORT: 'smtp',
      SMTP_URL: relay.url,
      WEBHOOK_ALLOW_PRIVATE: 'true',
      // A request in flight when the service behind it dies is answered 503 only when the gateway
      // stops waiting: below the client's 5 s (the default, 10 s, would count as a hang).
      UPSTREAM_TIMEOUT_MS: '4000',
      // Recovery within minutes instead of hours (see tests/faults/README.md).
      RETRY_BASE_SECONDS: '0.5',
      RETRY_MAX_SECONDS: '3',
      BREAKER_RESET_SECONDS: '2',
      DISPATCH_ACK_WAIT_SECONDS: '10',
      SMTP_TIMEOUT_SECONDS: '5',
      WEBHOOK_RETRY_SCHEDULE_SECONDS: '1,2,3,5,5,5,5,5,5,5,5,5',
      WEBHOOK_TIMEOUT_MS: '3000',
      WEBHOOK_POLL_MS: '250',
    }
    const url = new URL(databaseUrl)
    url.searchParams.delete('schema')
    p.pool = new pg.Pool({ connectionString: url.toString(), options: '-c search_path=faults', max: 2 })
    p.pool.on('error', () => undefined)
    for (const s of SERVICES) await p.startService(s)
    return p
  }

  async startService(name: ServiceName): Promise<void> {
    this.procs.set(name, await ServiceProcess.start(name, this.env, [], join(this.logDir, `${name}.log`)))
  }

  /** kill -9, then a fresh process once `downMs` has passed; answers the signal the old one died of. */
  async crashService(name: ServiceName, downMs: number): Promise<string | null> {
    const old = this.procs.get(name)
    await old?.kill()
    await new Promise((r) => setTimeout(r, downMs))
    await this.startService(name)
    return old?.proc.signalCode ?? null
  }

  async sql<T = any>(text: string, params: unknown[] = []): Promise<T[]> {
    return (await this.pool.query(text, params)).rows as T[]
  }

  async admin(method: string, path: string, body?: unknown, key = this.adminKey): Promise<any> {
    const res = await fetch(this.gatewayUrl + path, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const json = await res.json()
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
    return json
  }

  async stop(): Promise<void> {
    for (const s of [...SERVICES].reverse()) await this.procs.get(s)?.stop()
    await this.pool.end().catch(() => undefined)
    await Promise.allSettled([this.relay.stop(), ...this.receivers.map((r) => r.down())])
    await this.nats.stop()
    await this.pg.stop()
  }
}
