import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from '@mailer/observability'

/** Waits between tries to declare the streams again (JetStream answers only once it has started). */
const RETRY_MS = [250, 500, 1_000, 2_000, 5_000]

/**
 * What a service redoes after NATS comes back. A server that restarted without its JetStream store
 * (no persistent volume, a lost disk) has no streams and no durable consumers: without declaring
 * them again every publish failed, the outbox only grew, and nothing was consumed until each
 * service was restarted by hand. And core pub/sub hints sent while this connection was away
 * (cache invalidations) are lost: caches that hold what they announce are dropped.
 */
export class ReconnectHooks {
  /** By name: a stream or consumer declared twice (two services' views of it) is declared once. */
  private readonly declarations = new Map<string, () => Promise<unknown>>()
  private readonly hooks: Array<() => void> = []
  private running: Promise<void> = Promise.resolve()

  constructor(private readonly logger: Logger) {}

  /** Re-run on every reconnect, in the order first declared (streams before their consumers). */
  declare(name: string, run: () => Promise<unknown>): void {
    if (!this.declarations.has(name)) this.declarations.set(name, run)
  }

  /** Called on every reconnect, before the declarations. */
  onReconnect(hook: () => void): void {
    this.hooks.push(hook)
  }

  /** A reconnect: the hooks, then the declarations until they succeed (or the connection is closed). */
  reconnected(closed: () => boolean): Promise<void> {
    this.runHooks()
    this.running = this.running.then(() => this.redeclare(closed))
    return this.running
  }

  private async redeclare(closed: () => boolean): Promise<void> {
    for (let i = 0; !closed(); i++) {
      try {
        for (const run of this.declarations.values()) await run()
        if (i > 0) this.logger.info('streams and consumers declared again after the reconnect')
        return
      } catch (err) {
        this.logger.warn({ err }, 'could not declare the streams and consumers after a reconnect; retrying')
      }
      // Not holding the process: a shutdown during a failing retry exits without waiting for it.
      await sleep(RETRY_MS[Math.min(i, RETRY_MS.length - 1)]!, undefined, { ref: false })
    }
  }

  private runHooks(): void {
    for (const hook of this.hooks) {
      try {
        hook()
      } catch (err) {
        this.logger.warn({ err }, 'reconnect hook failed')
      }
    }
  }
}
