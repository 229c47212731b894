import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PrivateNats } from '../support/infra.js'
import { ALL_SERVICES, type ServiceName } from '../support/stack.js'
import { TlsNats } from '../support/tls-nats.js'

/**
 * A bad or missing setting stops a service at start with exit status 78 (EX_CONFIG) and a message
 * naming the variable, never a stack trace (contract.md part 1, docs/operations.md).
 */
const ROOT = join(import.meta.dirname, '..', '..')
const te = useTestEnv()

function run(
  name: ServiceName,
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', join('services', name, 'src', 'main.ts')], {
    cwd: ROOT,
    env: { ...process.env, ...te.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  proc.stdout.on('data', (d) => {
    output += d
  })
  proc.stderr.on('data', (d) => {
    output += d
  })
  // A service that started after all is stopped (the assertion on its status then fails).
  const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000)
  return new Promise((resolve) =>
    proc.once('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    }),
  )
}

const SERVICES = ALL_SERVICES

describe('configuration errors at start', () => {
  it.each(SERVICES)('%s: a bad value exits 78 naming the variable', async (name) => {
    const { code, output } = await run(name, { METRICS_PORT: 'abc' })
    expect(code).toBe(78)
    expect(output).toContain('METRICS_PORT')
    expect(output).not.toMatch(/\n\s+at /)
  })

  it.each(['gateway', 'dispatcher', 'broadcast'] as const)(
    '%s: NODE_ENV=production without TRACKING_SECRET exits 78 naming it',
    async (name) => {
      const { code, output } = await run(name, { NODE_ENV: 'production', TRACKING_SECRET: '' })
      expect(code).toBe(78)
      expect(output).toContain('TRACKING_SECRET')
      expect(output).not.toMatch(/\n\s+at /)
    },
  )

  describe('a NATS server that refuses the login of NATS_URL', () => {
    let nats: PrivateNats
    beforeAll(async () => {
      nats = await PrivateNats.start(['--user', 'mailer', '--pass', 'right-one'])
    }, 60_000)
    afterAll(() => nats.stop())

    it.each(SERVICES)('%s: exits 78 naming NATS_URL, never the password', async (name) => {
      const { code, output } = await run(name, {
        NATS_URL: `nats://mailer:wr0ng-s3cret@127.0.0.1:${nats.port}`,
      })
      expect(code).toBe(78)
      expect(output).toContain('NATS_URL')
      expect(output).not.toContain('wr0ng-s3cret')
      expect(output).not.toMatch(/\n\s+at /)
    })
  })

  it.each(SERVICES)('%s: a NATS_TLS_CA_FILE that does not exist exits 78 naming it', async (name) => {
    const { code, output } = await run(name, { NATS_TLS_CA_FILE: '/nonexistent/nats-ca.crt' })
    expect(code).toBe(78)
    expect(output).toContain('NATS_TLS_CA_FILE: no such file: /nonexistent/nats-ca.crt')
    expect(output).not.toMatch(/\n\s+at /)
  })

  // JetStream file storage that cannot hold TRACKING's 1 GiB reservation (a max_file_store, by
  // default 75 % of the volume's free space at start, smaller than that) refuses the stream with
  // "insufficient storage resources available": the services that declare it stop with one line
  // naming the stream and the fix, not an unhandled NatsError stack (docs/operations.md, NATS
  // streams and retention).
  describe('a NATS server without room for the TRACKING stream', () => {
    let nats: PrivateNats
    const dir = mkdtempSync(join(tmpdir(), 'mailer-nats-conf-'))
    beforeAll(async () => {
      const conf = join(dir, 'nats.conf')
      writeFileSync(conf, 'jetstream {\n  max_file_store: 512MB\n}\n')
      nats = await PrivateNats.start(['-c', conf])
    }, 60_000)
    afterAll(async () => {
      await nats.stop()
      rmSync(dir, { recursive: true, force: true })
    })

    it.each(['gateway', 'email'] as const)(
      '%s: exits 78 naming the stream and the fix, no stack',
      async (name) => {
        const { code, output } = await run(name, { NATS_URL: nats.url })
        // NATS_PREFIX (the test's) comes first in the stream's name.
        expect(output).toMatch(/stream \w*TRACKING, which reserves its max_bytes \(1 GiB\)/)
        expect(output).toContain('insufficient storage resources available')
        expect(output).toContain('nats.persistence.size to 2Gi or more')
        expect(output).not.toMatch(/\n\s+at /)
        expect(code).toBe(78)
      },
    )
  })

  describe('a NATS server with TLS from a private CA', () => {
    let nats: TlsNats
    beforeAll(async () => {
      nats = await TlsNats.start()
    }, 60_000)
    afterAll(() => nats.stop())

    // Retrying could not help: the process stops instead of waiting for ever, unready.
    it.each(SERVICES)('%s: without NATS_TLS_CA_FILE exits 78 naming it', async (name) => {
      const { NATS_TLS_CA_FILE: _, ...noCa } = nats.settings()
      const { code, output } = await run(name, noCa)
      expect(code).toBe(78)
      expect(output).toContain('NATS_TLS_CA_FILE: the NATS server')
      expect(output).not.toMatch(/\n\s+at /)
    })
  })
})
