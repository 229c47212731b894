import { type TestEnv, useTestEnv } from '@mailer/testing'
import type { SMTPServerOptions } from 'smtp-server'
import { afterAll, beforeAll } from 'vitest'
import { api } from './http.js'
import { Seeder } from './seed.js'
import { TestRelay } from './smtp-relay.js'
import { type ServiceName, Stack } from './stack.js'
import { type Received, Receiver, type Reply } from './webhooks.js'

type Settings = Record<string, string>

export interface UseStackOptions {
  /** useTestEnv's settings: in `te.env`, so every stack of the file has them. */
  testEnv?: Settings
  /** This stack's own settings (`new Stack(te, env)`): its services and `stack.env()` have them. */
  env?: Settings
  /** Settings of just the services started here (`startAll`'s overrides). */
  overrides?: Settings
  /** A `relay` (TestRelay), listening before the services start; smtp-server options unless `true`. */
  relay?: true | Partial<SMTPServerOptions>
  /**
   * A dispatcher relaying to that relay (SMTP, 5 s time-out), started after the services with these
   * settings on top (`true`: none). Implies `relay`.
   */
  dispatcher?: true | Settings
  /** A webhook `receiver`, listening before the services start; a function is its `reply`. */
  receiver?: true | ((r: Received, n: number) => Reply)
  /** A `seed` (Seeder) for the file's schema and streams, connected before the services start. */
  seed?: true
  /** Runs before the services start (once the relay, the receiver and the seeder are up). */
  before?: (s: UsedStack) => unknown
  /** Closes what the file opened for the services, once they and the seeder have stopped. */
  after?: (s: UsedStack) => unknown
  /** Time-out of both hooks (vitest's hookTimeout unless given). */
  timeout?: number
}

export interface UsedStack {
  te: TestEnv
  stack: Stack
  /** The API client, bound to the gateway's address when it is called (so usable at the top level). */
  client: ReturnType<typeof api>
  /** Only with the `relay` or `dispatcher` option. */
  relay: TestRelay
  /** Only with the `receiver` option. */
  receiver: Receiver
  /** Only with the `seed` option. */
  seed: Seeder
  /** Receivers the tests start (e.g. `projectWithReceiver`): closed with the stack. */
  receivers: Receiver[]
}

/**
 * A test file's services: its test env, a Stack of `services` started in a `beforeAll` and stopped
 * in an `afterAll` (the gateway first, then the rest; after them the seeder, whatever `after`
 * closes, the relay, the receivers). Call it at the top level, before the file's own hooks: its
 * `beforeAll` runs first and, as vitest runs `afterAll` hooks in reverse, its `afterAll` last.
 */
export function useStack(services: readonly ServiceName[], opts: UseStackOptions = {}): UsedStack {
  const te = useTestEnv(opts.testEnv)
  const stack = new Stack(te, opts.env)
  const relay = opts.relay || opts.dispatcher ? new TestRelay(opts.relay === true ? {} : opts.relay) : null
  const receiver = opts.receiver ? new Receiver(opts.receiver === true ? undefined : opts.receiver) : null
  const seed = opts.seed ? new Seeder(te) : null
  const receivers: Receiver[] = []
  const client = api(() => {
    if (!stack.gatewayUrl) throw new Error('useStack: the gateway is not running (not started, or not yet)')
    return stack.gatewayUrl
  })
  const used: UsedStack = {
    te,
    stack,
    client,
    receivers,
    get relay() {
      if (!relay) throw new Error('useStack: no relay (ask for one with the relay or dispatcher option)')
      return relay
    },
    get receiver() {
      if (!receiver) throw new Error('useStack: no receiver (ask for one with the receiver option)')
      return receiver
    },
    get seed() {
      if (!seed) throw new Error('useStack: no seeder (ask for one with the seed option)')
      return seed
    },
  }
  // Only what was opened is closed: after a failed start the rest is still closed.
  let relayUp = false
  let seedUp = false

  beforeAll(async () => {
    if (relay) {
      await relay.listen()
      relayUp = true
    }
    if (receiver) {
      await receiver.listen()
      receivers.push(receiver)
    }
    if (seed) {
      await seed.connect()
      seedUp = true
    }
    await opts.before?.(used)
    await stack.startAll(services, opts.overrides)
    if (relay && opts.dispatcher)
      await stack.start('dispatcher', {
        MAIL_TRANSPORT: 'smtp',
        SMTP_URL: relay.url,
        SMTP_TIMEOUT_SECONDS: '5',
        ...(opts.dispatcher === true ? {} : opts.dispatcher),
      })
  }, opts.timeout)

  afterAll(async () => {
    await stack.stopAll()
    if (seed && seedUp) await seed.close()
    await opts.after?.(used)
    if (relay && relayUp) await relay.stop()
    await Promise.all(receivers.map((r) => r.close()))
  }, opts.timeout)

  return used
}
