import type { Logger } from '@mailer/observability'
import type { NatsConnection, Subscription } from 'nats'
import { decodeJson } from './codec.js'
import type { ReconnectHooks } from './reconnect-hooks.js'

/** The two halves of listening to broadcasts about what a cache holds (`Bus.subscribeInvalidations`). */
export interface InvalidationHandlers {
  /** Each broadcast, decoded from JSON. A throw (a payload that fails its schema) is logged and ignored. */
  onMessage(payload: unknown): void
  /**
   * After every reconnect: the broadcasts sent while this connection was down never arrived (core
   * pub/sub keeps nothing for an absent subscriber), so drop whatever they might have invalidated.
   */
  onMissed(): void
}

/** What listening needs of the connection (the Bus). */
interface Connection {
  readonly nc: NatsConnection
  readonly logger: Logger
  readonly reconnects: ReconnectHooks
}

/**
 * A core NATS fan-out subscription (every replica gets every message) on `subject` (`name` with the
 * deployment prefix), and the reconnect hook that makes up for the messages it cannot get. The two
 * are registered together so that no cache can be given the one without the other.
 */
export function listenForInvalidations(
  conn: Connection,
  name: string,
  subject: string,
  handlers: InvalidationHandlers,
): Subscription {
  const sub = conn.nc.subscribe(subject, {
    callback: (err, msg) => {
      if (err) return
      try {
        handlers.onMessage(decodeJson(msg.data))
      } catch (e) {
        conn.logger.warn({ err: e, subject: name }, 'bad message ignored')
      }
    },
  })
  conn.reconnects.onReconnect(() => handlers.onMissed())
  return sub
}
