import type { Metrics } from '@mailer/observability'

/** The email service's own metrics (names get the `mailer_email_` prefix). */
export class EmailMetrics {
  readonly accepted
  readonly rejected
  readonly acceptSeconds
  readonly queueDepth
  readonly queueOldestSeconds

  constructor(m: Metrics) {
    this.accepted = m.counter('accepted_total', 'Emails accepted (idempotent repeats not included)', [
      'source',
      'mode',
    ])
    this.rejected = m.counter('rejected_total', 'Send inputs rejected, by error code', ['source', 'code'])
    this.acceptSeconds = m.histogram('accept_seconds', 'Time to accept one send or batch request', ['source'])
    // Set by the housekeeping loop every 10 s, never by a scrape.
    this.queueDepth = m.readGauge('queue_depth', 'Emails queued or deferred, not yet sent')
    this.queueOldestSeconds = m.readGauge(
      'queue_oldest_seconds',
      'Seconds the oldest due email (queued, or its retry released) has waited for the dispatcher',
    )
  }
}
