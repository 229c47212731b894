import { Writable } from 'node:stream'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { every } from './every.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function capture() {
  const lines: Array<Record<string, unknown>> = []
  const out = new Writable({
    write: (c, _e, cb) => {
      lines.push(JSON.parse(String(c)))
      cb()
    },
  })
  return { logger: pino(out), lines }
}

describe('every', () => {
  it('never runs twice at once, goes on after a failure, and stop waits for the run in progress', async () => {
    const { logger, lines } = capture()
    let runs = 0
    let inFlight = 0
    let maxInFlight = 0
    let finished = 0
    const loop = every(10, 'demo', logger, async () => {
      runs++
      inFlight++
      maxInFlight = Math.max(maxInFlight, inFlight)
      try {
        if (runs === 1) throw new Error('first run fails')
        await sleep(35) // longer than the interval
      } finally {
        inFlight--
        finished++
      }
    })
    while (runs < 3) await sleep(5)
    await loop.stop()
    expect(maxInFlight).toBe(1)
    expect(finished).toBe(runs)
    const after = runs
    await sleep(40)
    expect(runs).toBe(after)
    expect(lines.find((l) => l.loop === 'demo')).toMatchObject({ msg: 'background run failed; will retry' })
  })

  it('with now, runs at once, and the interval waits for that first run', async () => {
    const { logger } = capture()
    let runs = 0
    let release!: () => void
    const loop = every(
      5,
      'demo',
      logger,
      async () => {
        runs++
        if (runs === 1) await new Promise<void>((r) => (release = r))
      },
      { now: true },
    )
    expect(runs).toBe(1)
    await sleep(30) // several intervals while the first run is held
    expect(runs).toBe(1)
    release()
    while (runs < 2) await sleep(5)
    await loop.stop()
  })
})
