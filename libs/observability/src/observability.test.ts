import { createServer } from 'node:net'
import { Writable } from 'node:stream'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { REDACT_PATHS } from './logger.js'
import { Metrics } from './metrics.js'
import { startOpsServer } from './ops-server.js'

/** Whether this machine has IPv6 loopback (::1): without it only the IPv4 half can be checked. */
const ipv6Loopback = await new Promise<boolean>((resolve) => {
  const probe = createServer()
  probe.once('error', () => resolve(false))
  probe.listen(0, '::1', () => probe.close(() => resolve(true)))
})

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

  // The probes reach the pod on its IP, which is IPv6 on a single-stack IPv6 cluster: with no host
  // given the server listens as Node does by default (`::`, dual-stack), not on 0.0.0.0 only.
  it('listens on IPv6 and IPv4 unless a host is given', async () => {
    const ops = await startOpsServer({
      port: 0,
      registry: new Metrics('dual').registry,
      ready: async () => true,
      logger: pino({ level: 'silent' }),
    })
    try {
      expect((await fetch(`http://127.0.0.1:${ops.port}/livez`)).status).toBe(200)
      if (ipv6Loopback) expect((await fetch(`http://[::1]:${ops.port}/livez`)).status).toBe(200)
    } finally {
      await ops.close()
    }
    // A given host is kept: 127.0.0.1 alone is not reachable over IPv6.
    const v4 = await startOpsServer({
      port: 0,
      host: '127.0.0.1',
      registry: new Metrics('v4').registry,
      ready: async () => true,
      logger: pino({ level: 'silent' }),
    })
    try {
      expect((await fetch(`http://127.0.0.1:${v4.port}/livez`)).status).toBe(200)
      if (ipv6Loopback) await expect(fetch(`http://[::1]:${v4.port}/livez`)).rejects.toThrow()
    } finally {
      await v4.close()
    }
  })
})
