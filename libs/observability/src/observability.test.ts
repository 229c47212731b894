import { Writable } from 'node:stream'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { REDACT_PATHS } from './logger.js'
import { Metrics } from './metrics.js'
import { startOpsServer } from './ops-server.js'

describe('logger redaction', () => {
  it('never writes keys or secrets', () => {
    const lines: string[] = []
    const out = new Writable({
      write: (c, _e, cb) => {
        lines.push(String(c))
        cb()
      },
    })
    const log = pino({ redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, out)
    log.info(
      { key: 'fs_live_secret', webhook: { secret: 'whsec_x' }, headers: { authorization: 'Bearer abc' } },
      'hello',
    )
    expect(lines.join('')).not.toMatch(/fs_live_secret|whsec_x|Bearer abc/)
  })
})

describe('ops server', () => {
  it('serves /metrics with the service prefix, /livez, and /readyz that goes red on drain', async () => {
    const m = new Metrics('demo')
    m.counter('things_total', 'things').inc()
    let ready = true
    const ops = await startOpsServer({
      port: 0,
      registry: m.registry,
      ready: async () => ready,
      logger: pino({ level: 'silent' }),
    })
    try {
      const base = `http://127.0.0.1:${ops.port}`
      const metrics = await (await fetch(`${base}/metrics`)).text()
      expect(metrics).toContain('mailer_demo_things_total 1')
      expect(metrics).toContain('mailer_demo_process_cpu_seconds_total')
      expect((await fetch(`${base}/livez`)).status).toBe(200)
      expect((await fetch(`${base}/readyz`)).status).toBe(200)
      ready = false
      expect((await fetch(`${base}/readyz`)).status).toBe(503)
      ready = true
      ops.markDraining()
      expect((await fetch(`${base}/readyz`)).status).toBe(503)
    } finally {
      await ops.close()
    }
  })
})
