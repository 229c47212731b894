import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import { SampledGauges } from './sampled-gauges.js'

export { Counter, Gauge, Histogram, Registry }

/** Latency buckets (seconds) for request/response work: 1 ms to 10 s. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/**
 * An app-owned registry whose metric names all start with `mailer_<service>_`, plus the Node
 * process metrics under the same prefix.
 */
export class Metrics {
  readonly registry = new Registry()
  readonly prefix: string
  /** Created with the first gauge read from the database. */
  private sampled: SampledGauges | undefined

  constructor(readonly service: string) {
    this.prefix = `mailer_${service}_`
    collectDefaultMetrics({ register: this.registry, prefix: this.prefix })
  }

  counter<L extends string>(name: string, help: string, labelNames: L[] = []): Counter<L> {
    return new Counter({ name: this.prefix + name, help, labelNames, registers: [this.registry] })
  }

  gauge<L extends string>(
    name: string,
    help: string,
    labelNames: L[] = [],
    collect?: (this: Gauge<L>) => void | Promise<void>,
  ): Gauge<L> {
    return new Gauge({
      name: this.prefix + name,
      help,
      labelNames,
      registers: [this.registry],
      ...(collect ? { collect } : {}),
    })
  }

  /**
   * A gauge whose value `read` gets from the database when it is scraped: the scrape waits for
   * the read at most SAMPLE_WAIT_MS, then shows the last value read (0 before the first), and
   * `gauge_read_timestamp_seconds{gauge="<name>"}` when it was read (see SampledGauges).
   */
  sampledGauge(name: string, help: string, read: () => Promise<number>): Gauge<never> {
    return this.gauge(name, help, [], this.sampledGauges().collectValue(name, read))
  }

  /**
   * A gauge that a loop of its own sets from the database (a scrape never waits on it): call
   * `markRead(name)` after each read, for `gauge_read_timestamp_seconds{gauge="<name>"}`.
   */
  readGauge(name: string, help: string): Gauge<never> {
    this.sampledGauges()
    return this.gauge(name, help)
  }

  /** The gauge `name` (a readGauge) was just set from the database. */
  markRead(name: string): void {
    this.sampledGauges().markRead(name)
  }

  private sampledGauges(): SampledGauges {
    if (!this.sampled) {
      const sampled = new SampledGauges()
      this.gauge(
        'gauge_read_timestamp_seconds',
        'Unix time a gauge read from the database (gauge: its name) got the value it shows; behind while the database does not answer',
        ['gauge'],
        sampled.collectTimestamps(),
      )
      this.sampled = sampled
    }
    return this.sampled
  }

  histogram<L extends string>(
    name: string,
    help: string,
    labelNames: L[] = [],
    buckets = LATENCY_BUCKETS,
  ): Histogram<L> {
    return new Histogram({ name: this.prefix + name, help, labelNames, buckets, registers: [this.registry] })
  }
}
