/** What the worker needs to know of its NATS connection (the Bus: `isConnected`, `linkDrops`). */
export interface NatsLink {
  up(): boolean
  /** How many times the connection has dropped so far. */
  drops(): number
}

/**
 * Tells which claimed deliveries may carry their webhook as it was before a change this replica
 * never heard of. A change of a webhook (URL, secret, enabled, deleted) reaches the other replicas
 * as a core NATS broadcast, which hands back what they claimed ahead for its project; one sent
 * while this replica's connection was down never arrives. The reconnect hands back what waits in
 * memory, but an attempt can start before that, or while the connection is still down (the
 * deliveries go on: they need only PostgreSQL and the receiver). Those attempts read their webhook
 * again first, so none goes to an old URL, with a revoked secret, or to a disabled webhook.
 */
export class MissedChanges {
  /** Each held delivery's count of drops when its claim was asked for. */
  private readonly claimedAt = new WeakMap<object, number>()

  constructor(private readonly link: NatsLink) {}

  /** Taken before a claim is asked for: a drop while it runs counts against its rows. */
  mark(): number {
    return this.link.drops()
  }

  claimed(row: object, mark: number): void {
    this.claimedAt.set(row, mark)
  }

  /** The connection dropped since the row was claimed, or is down now. */
  mayHaveMissed(row: object): boolean {
    return !this.link.up() || this.claimedAt.get(row) !== this.link.drops()
  }
}
