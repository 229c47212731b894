import { setTimeout as sleep } from 'node:timers/promises'
import { type Bus, encodeJson } from '@mailer/bus'
import { type TrackingHit, trackingSubject } from '@mailer/contracts'
import type { Logger, Metrics } from '@mailer/observability'

/** Waits before the second and third try of a publish (the first goes at once). */
const RETRY_MS = [1_000, 3_000]
/** A JetStream acknowledgement is a local write on the NATS server: this long means it is away. */
const PUBLISH_TIMEOUT_MS = 5_000

/**
 * Hands opens and clicks to the TRACKING stream, which the email service consumes: a hit waits
 * there through a restart or a rollout of the email service instead of being lost. Publishes run
 * after the reader was answered and nobody awaits them. A publish that fails (NATS away, the
 * stream full) is tried again a few times with the same msgID, which JetStream de-duplicates (and
 * the email service records a hit once whatever it is given twice); after the last try the hit
 * is logged and counted as lost.
 */
export class TrackingHits {
  private readonly inflight = new Set<Promise<void>>()
  private stopping = false
  private readonly lost
  private readonly published

  constructor(
    private readonly bus: Bus,
    private readonly logger: Logger,
    metrics: Metrics,
  ) {
    this.lost = metrics.counter(
      'tracking_record_failures_total',
      'Opens and clicks that could not be handed to the TRACKING stream (lost)',
      ['kind'],
    )
    this.published = metrics.counter(
      'tracking_published_total',
      'Opens and clicks stored on the TRACKING stream for the email service',
      ['kind'],
    )
  }

  /** Starts the publish and returns at once. */
  record(hit: TrackingHit): void {
    const p = this.publish(hit)
    this.inflight.add(p)
    void p.finally(() => this.inflight.delete(p))
  }

  /** At shutdown, once no request comes in any more: no new tries, the publishes in flight end. */
  async settle(): Promise<void> {
    this.stopping = true
    await Promise.allSettled([...this.inflight])
  }

  private async publish(hit: TrackingHit): Promise<void> {
    const data = encodeJson(hit)
    const subject = this.bus.subject(trackingSubject(hit.kind))
    for (let attempt = 0; ; attempt++) {
      try {
        await this.bus.publishDurable(subject, data, hit.id, PUBLISH_TIMEOUT_MS)
        this.published.inc({ kind: hit.kind })
        return
      } catch (err) {
        const wait = RETRY_MS[attempt]
        if (wait === undefined || this.stopping) {
          this.lost.inc({ kind: hit.kind })
          this.logger.warn(
            { err, requestId: hit.requestId, emailId: hit.emailId, hitId: hit.id },
            `${hit.kind} not recorded`,
          )
          return
        }
        await sleep(wait, undefined, { ref: false })
      }
    }
  }
}
