import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'

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

  histogram<L extends string>(
    name: string,
    help: string,
    labelNames: L[] = [],
    buckets = LATENCY_BUCKETS,
  ): Histogram<L> {
    return new Histogram({ name: this.prefix + name, help, labelNames, buckets, registers: [this.registry] })
  }
}
