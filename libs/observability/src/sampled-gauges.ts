import type { Gauge } from 'prom-client'

/**
 * How long a scrape waits for a gauge's read from the database before it shows the value read
 * last: well under Prometheus' default 10 s scrape timeout, and long enough for the counts these
 * gauges run on a healthy database to be shown fresh.
 */
export const SAMPLE_WAIT_MS = 500

interface Sample {
  /** The gauge's name without the prefix: its `gauge` label on the timestamp. */
  name: string
  read: () => Promise<number>
  value: number | undefined
  /** The read in flight: a scrape joins it rather than queueing a second one behind it. */
  reading: Promise<void> | null
}

/**
 * Gauges whose values are read from a database, and when each was last read. A hung database
 * leaves a read unanswered (a pool connection open with no reply, or a connect timeout each
 * time): a scrape that waited for it held `/metrics` for seconds or for good, past Prometheus'
 * scrape timeout, and every other metric of the page went missing with it. Here a scrape starts
 * a read unless one is in flight, waits for it at most SAMPLE_WAIT_MS, and shows the last value
 * read; `gauge_read_timestamp_seconds{gauge}` says how old that value is, as an exporter that
 * serves cached values does.
 */
export class SampledGauges {
  private readonly samples = new Map<string, Sample>()
  /** Unix time in seconds of each gauge's last successful read, by gauge name (no prefix). */
  private readonly readAt = new Map<string, number>()

  constructor(private readonly waitMs = SAMPLE_WAIT_MS) {}

  /** The collect of the `gauge_read_timestamp_seconds{gauge}` gauge. */
  collectTimestamps(): (this: Gauge<'gauge'>) => Promise<void> {
    const self = this
    return async function collect() {
      // Waits for the reads the same scrape started (or starts them), so the time shown is that
      // of the value shown.
      await Promise.all([...self.samples.values()].map((s) => self.sample(s)))
      for (const [gauge, at] of self.readAt) this.set({ gauge }, at)
    }
  }

  /** The collect of a gauge whose value `read` gets, for `name` (without the prefix). */
  collectValue(name: string, read: () => Promise<number>): (this: Gauge<never>) => Promise<void> {
    const s: Sample = { name, read, value: undefined, reading: null }
    this.samples.set(name, s)
    const self = this
    return async function collect() {
      await self.sample(s)
      if (s.value !== undefined) this.set(s.value)
    }
  }

  /** A gauge set by its own loop was just read from its source. */
  markRead(name: string): void {
    this.readAt.set(name, Date.now() / 1000)
  }

  private sample(s: Sample): Promise<void> {
    if (!s.reading) {
      s.reading = s
        .read()
        .then(
          (value) => {
            s.value = value
            this.markRead(s.name)
          },
          // A failed read keeps the last value; its timestamp stays behind and says so.
          () => undefined,
        )
        .finally(() => {
          s.reading = null
        })
    }
    return within(s.reading, this.waitMs)
  }
}

/** Settles when `p` does or after `ms`, whichever comes first; never rejects. */
function within(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms)
  })
  return Promise.race([p, late]).finally(() => clearTimeout(timer))
}
