import type { Logger, Metrics } from '@mailer/observability'
import type { SenderStore } from './sender-store.js'

/** The broadcast service's own metrics (names get the `mailer_broadcast_` prefix). */
export class BroadcastMetrics {
  readonly emails
  readonly chunkSeconds
  readonly unsubscribes

  constructor(m: Metrics, store: SenderStore, logger: Logger) {
    this.emails = m.counter('emails_total', 'Contacts handled by the broadcast sender, by outcome', [
      'outcome',
    ])
    this.chunkSeconds = m.histogram('chunk_seconds', 'Time to send one chunk of a broadcast', ['outcome'])
    this.unsubscribes = m.counter('unsubscribes_total', 'Contacts unsubscribed through their one-click link')
    // Read when scraped, never waited on for long: a hung database shows the last count.
    m.sampledGauge(
      'active',
      'Broadcasts started and not finished (sending or paused), deployment-wide',
      async () => {
        try {
          return await store.countActive()
        } catch (err) {
          logger.debug({ err }, 'could not count active broadcasts')
          throw err
        }
      },
    )
  }
}
