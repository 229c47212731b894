import type { NatsLink } from './missed-changes.js'

/** The delivery loop's settings and what it needs of the runtime (DeliveryWorker). */
export interface WorkerOptions {
  schedule: readonly number[]
  timeoutMs: number
  pollMs: number
  /** Attempts in flight in this replica, in all and per webhook. */
  concurrency: number
  perWebhook: number
  /**
   * Deliveries claimed ahead per webhook, beyond those in flight, so that a slot coming free is
   * filled from memory rather than by a claim (0: claim only for free slots).
   */
  prefetch: number
  /** False once the runtime's connections are gone (a simulated crash): the loop stops. */
  alive: () => boolean
  /**
   * How long `stop` waits for the database once every attempt in flight has its endpoint's answer
   * (a claim running, results and hand-backs to write): the shutdown's database waits (the
   * runtime's `dbWaits`); past them those rows are left to their leases, as a crashed replica's are.
   */
  dbWaits: { within(p: Promise<unknown>): Promise<boolean> }
  /** The replica's NATS connection: a drop may have hidden a change of a webhook (MissedChanges). */
  link: NatsLink
}
