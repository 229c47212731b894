import type { Runtime } from '@mailer/bus'
import type { TestEnv } from '@mailer/testing'
import { settleWithin } from './infra.js'

/** Every service, in the order a whole stack starts them (the gateway last, once what it calls runs). */
export const ALL_SERVICES = [
  'auth',
  'email',
  'dispatcher',
  'webhook',
  'broadcast',
  'analytics',
  'gateway',
] as const
export type ServiceName = (typeof ALL_SERVICES)[number]

type Registry = Runtime['metrics']['registry']

interface Handle {
  stop(): Promise<void>
  kill(): Promise<void>
  url?: string
  metricsPort: number
  /** The registry its /metrics serves: every metric it defined, with label names, used or not. */
  registry: Registry
}

export const ADMIN_KEY = 'test-admin-key-0123456789'

/**
 * Starts real services in this process (each with its own NATS connection, database pool and
 * metrics registry), wired to the test file's schema and NATS prefix. Each is started through its
 * own `start(env)` exactly as its main.ts does.
 */
export class Stack {
  private readonly running = new Map<ServiceName, Handle>()
  gatewayUrl = ''

  constructor(
    private readonly te: TestEnv,
    private readonly extraEnv: Record<string, string> = {},
  ) {}

  env(overrides: Record<string, string> = {}): Record<string, string> {
    return { ADMIN_API_KEY: ADMIN_KEY, ...this.te.env, ...this.extraEnv, ...overrides }
  }

  async start(name: ServiceName, overrides: Record<string, string> = {}): Promise<void> {
    const mod = (await import(`@mailer/${name}/app`)) as { start: (env: any) => Promise<any> }
    const envMod = (await import(`@mailer/${name}/env`)) as {
      loadEnv: (src: Record<string, string>) => unknown
    }
    const env = envMod.loadEnv(this.env(overrides))
    const started = await mod.start(env)
    const rt = started.rt ?? started
    const handle: Handle = {
      stop: () => rt.stop(),
      kill: () => rt.kill(),
      metricsPort: rt.ops.port,
      registry: rt.metrics.registry,
      ...(started.url ? { url: started.url } : {}),
    }
    if (name === 'gateway') this.gatewayUrl = started.url
    this.running.set(name, handle)
  }

  async startAll(names: readonly ServiceName[], overrides: Record<string, string> = {}): Promise<void> {
    // Back-end services first so the gateway finds responders at once.
    const order = [...names].sort((a, b) => (a === 'gateway' ? 1 : 0) - (b === 'gateway' ? 1 : 0))
    for (const n of order) await this.start(n, overrides)
  }

  metricsPort(name: ServiceName): number {
    const h = this.running.get(name)
    if (!h) throw new Error(`${name} is not running`)
    return h.metricsPort
  }

  registry(name: ServiceName): Registry {
    const h = this.running.get(name)
    if (!h) throw new Error(`${name} is not running`)
    return h.registry
  }

  async stop(name: ServiceName): Promise<void> {
    const h = this.running.get(name)
    this.running.delete(name)
    if (!h) return
    // A drain is bounded inside the service; this bounds the rest (pool and socket closes) so an
    // afterAll hook never hangs on a busy machine. Same bound for the forced close: what is left
    // is garbage-collected with the worker.
    if (!(await settleWithin(h.stop(), 15_000)))
      await settleWithin(
        h.kill().catch(() => undefined),
        5_000,
      )
  }

  /** Drops connections without draining, as a crash would. */
  async kill(name: ServiceName): Promise<void> {
    const h = this.running.get(name)
    this.running.delete(name)
    await h?.kill()
  }

  async stopAll(): Promise<void> {
    // The gateway first (no new work comes in), then the rest together.
    if (this.running.has('gateway')) await this.stop('gateway')
    await Promise.all([...this.running.keys()].map((n) => this.stop(n)))
  }
}
