import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { startRuntime } from '@mailer/bus'
import { baseEnv, parseEnv } from '@mailer/config'
import { useTestEnv, waitFor } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, onExit, PrivateNats, PrivatePostgres } from '../support/infra.js'
import { Stack } from '../support/stack.js'

/**
 * Operators' view of /readyz and /livez: readiness follows the service's dependencies (it goes red
 * while NATS is down and green again once it is back), liveness does not (a pod is not restarted
 * for an outage that is not its own). The gateway's readiness leaves PostgreSQL out: it answers a
 * database outage itself, and all its replicas share the database (runtime.ts).
 */
const te = useTestEnv()
let nats: PrivateNats
let pg: PrivatePostgres
let stack: Stack

// Their own NATS and PostgreSQL servers, so the test can take them down (readiness needs no tables).
beforeAll(async () => {
  nats = await PrivateNats.start()
  pg = await PrivatePostgres.start()
  stack = new Stack(te, { NATS_URL: nats.url, DATABASE_URL: pg.url })
  await stack.startAll(['auth', 'dispatcher', 'gateway'])
}, 60_000)
afterAll(async () => {
  await nats.up().catch(() => undefined)
  await stack.stopAll()
  await nats.stop()
  await pg.stop()
})

const SERVICES = ['auth', 'dispatcher', 'gateway'] as const
/** The services whose readiness follows PostgreSQL too. */
const ON_DB = ['auth', 'dispatcher'] as const
const probe = async (port: number, path: '/readyz' | '/livez') =>
  (await fetch(`http://127.0.0.1:${port}${path}`)).status

describe('readiness and liveness', () => {
  it('/readyz is 503 while NATS is down and 200 once it is back; /livez stays 200', async () => {
    for (const s of SERVICES) expect(await probe(stack.metricsPort(s), '/readyz')).toBe(200)
    await nats.kill()
    for (const s of SERVICES) {
      const port = stack.metricsPort(s)
      await waitFor(async () => (await probe(port, '/readyz')) === 503, {
        timeoutMs: 10_000,
        what: `${s} not ready`,
      })
      expect(await probe(port, '/livez')).toBe(200)
    }
    await nats.up()
    for (const s of SERVICES) {
      const port = stack.metricsPort(s)
      await waitFor(async () => (await probe(port, '/readyz')) === 200, {
        timeoutMs: 15_000,
        what: `${s} ready again`,
      })
    }
  })

  it('/readyz is 503 while PostgreSQL is down and 200 once it is back; /livez stays 200; the gateway stays ready and answers 503 itself', async () => {
    for (const s of SERVICES) expect(await probe(stack.metricsPort(s), '/readyz')).toBe(200)
    await pg.crash()
    for (const s of ON_DB) {
      const port = stack.metricsPort(s)
      await waitFor(async () => (await probe(port, '/readyz')) === 503, {
        timeoutMs: 15_000,
        what: `${s} not ready`,
      })
      expect(await probe(port, '/livez')).toBe(200)
    }
    // Out of its Service's endpoints, every replica would leave callers to the ingress's own 503.
    expect(await probe(stack.metricsPort('gateway'), '/readyz')).toBe(200)
    const me = await fetch(`${stack.gatewayUrl}/v1/me`, {
      headers: { authorization: `Bearer fs_live_${'a'.repeat(32)}` },
    })
    expect(me.status).toBe(503)
    expect(((await me.json()) as { error: { code: string } }).error.code).toBe('service_unavailable')
    await pg.up()
    for (const s of SERVICES) {
      const port = stack.metricsPort(s)
      await waitFor(async () => (await probe(port, '/readyz')) === 200, {
        timeoutMs: 15_000,
        what: `${s} ready again`,
      })
    }
  })

  it('a service started while NATS is unreachable waits for it (live, not ready), then gets ready', async () => {
    const late = await PrivateNats.start()
    await late.kill()
    const metricsPort = await freePort()
    const proc = spawn(process.execPath, ['--import', 'tsx', join('services', 'auth', 'src', 'main.ts')], {
      cwd: join(import.meta.dirname, '..', '..'),
      env: {
        ...process.env,
        ...stack.env({ NATS_URL: late.url, DATABASE_URL: pg.url }),
        METRICS_PORT: String(metricsPort),
      },
      stdio: 'ignore',
    })
    onExit(() => proc.kill('SIGKILL'))
    const exited = new Promise((resolve) => proc.once('exit', resolve))
    try {
      await waitFor(async () => (await probe(metricsPort, '/livez')) === 200, {
        timeoutMs: 20_000,
        what: 'auth live',
      })
      expect(await probe(metricsPort, '/readyz')).toBe(503)
      expect(proc.exitCode).toBeNull()
      await late.up()
      await waitFor(async () => (await probe(metricsPort, '/readyz')) === 200, {
        timeoutMs: 20_000,
        what: 'auth ready',
      })
      proc.kill('SIGTERM')
      expect(await exited).toBe(0)
    } finally {
      proc.kill('SIGKILL')
      await late.stop()
    }
  })

  it('a service stopped while it still waits for NATS at start exits 0 and says so', async () => {
    const metricsPort = await freePort()
    const proc = spawn(process.execPath, ['--import', 'tsx', join('services', 'auth', 'src', 'main.ts')], {
      cwd: join(import.meta.dirname, '..', '..'),
      env: {
        ...process.env,
        ...stack.env({ NATS_URL: `nats://127.0.0.1:${await freePort()}`, DATABASE_URL: pg.url }),
        METRICS_PORT: String(metricsPort),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    onExit(() => proc.kill('SIGKILL'))
    let stderr = ''
    proc.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString()
    })
    const exited = new Promise((resolve) => proc.once('exit', (code, signal) => resolve(code ?? signal)))
    await waitFor(async () => (await probe(metricsPort, '/livez').catch(() => 0)) === 200, {
      timeoutMs: 20_000,
      what: 'auth live',
    })
    proc.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(stderr).toContain('stopped while starting: nothing to drain')
  })

  it('/readyz is 503 until the service is wired (handlers subscribed), then 200', async () => {
    const rt = await startRuntime('wiring', parseEnv(baseEnv, te.env))
    try {
      expect(await probe(rt.ops.port, '/livez')).toBe(200)
      expect(await probe(rt.ops.port, '/readyz')).toBe(503)
      rt.started()
      expect(await probe(rt.ops.port, '/readyz')).toBe(200)
    } finally {
      await rt.stop()
    }
  })
})
