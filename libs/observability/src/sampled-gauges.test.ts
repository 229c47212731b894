import { describe, expect, it } from 'vitest'
import { Metrics } from './metrics.js'

/** A read the test answers (or never answers), counting how many were started. */
function controlledRead() {
  const pending: Array<{ resolve: (n: number) => void; reject: (e: Error) => void }> = []
  const read = () =>
    new Promise<number>((resolve, reject) => {
      pending.push({ resolve, reject })
    })
  return { read, pending }
}

const sample = (page: string, series: string) =>
  new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(page)?.[1]

describe('sampled gauges', () => {
  it('show the value read and when it was read', async () => {
    const m = new Metrics('demo')
    m.sampledGauge('things', 'things', async () => 7)
    const page = await m.registry.metrics()
    expect(sample(page, 'mailer_demo_things')).toBe('7')
    const at = Number(sample(page, 'mailer_demo_gauge_read_timestamp_seconds{gauge="things"}'))
    expect(Math.abs(at - Date.now() / 1000)).toBeLessThan(60)
  })

  it('answer a scrape with the last value while a read gets no answer, without stacking reads', async () => {
    const m = new Metrics('demo')
    const r = controlledRead()
    m.sampledGauge('things', 'things', r.read)
    const first = m.registry.metrics()
    r.pending[0]!.resolve(3)
    const readAt = sample(await first, 'mailer_demo_gauge_read_timestamp_seconds{gauge="things"}')
    // The next read never answers (a hung database): scrapes still answer, with 3 and its time.
    for (let i = 0; i < 3; i++) {
      const page = await m.registry.metrics()
      expect(sample(page, 'mailer_demo_things')).toBe('3')
      expect(sample(page, 'mailer_demo_gauge_read_timestamp_seconds{gauge="things"}')).toBe(readAt)
    }
    expect(r.pending).toHaveLength(2)
  })

  it('keep the last value when a read fails, and show 0 with no timestamp before any read', async () => {
    const m = new Metrics('demo')
    const r = controlledRead()
    m.sampledGauge('things', 'things', r.read)
    const first = m.registry.metrics()
    r.pending[0]!.reject(new Error('database unavailable'))
    const page = await first
    expect(sample(page, 'mailer_demo_things')).toBe('0')
    expect(sample(page, 'mailer_demo_gauge_read_timestamp_seconds{gauge="things"}')).toBeUndefined()
    const second = m.registry.metrics()
    r.pending[1]!.resolve(5)
    expect(sample(await second, 'mailer_demo_things')).toBe('5')
    const third = m.registry.metrics()
    r.pending[2]!.reject(new Error('database unavailable'))
    expect(sample(await third, 'mailer_demo_things')).toBe('5')
    expect(r.pending).toHaveLength(3)
  })

  it('give a gauge set by its own loop the time of its last read', async () => {
    const m = new Metrics('demo')
    const g = m.readGauge('queue', 'queue')
    expect(await m.registry.metrics()).not.toContain('gauge="queue"')
    g.set(4)
    m.markRead('queue')
    const page = await m.registry.metrics()
    expect(sample(page, 'mailer_demo_queue')).toBe('4')
    expect(sample(page, 'mailer_demo_gauge_read_timestamp_seconds{gauge="queue"}')).toBeDefined()
  })
})
