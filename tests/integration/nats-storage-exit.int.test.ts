import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PrivateNats } from '../support/infra.js'

/**
 * A NATS server whose JetStream file storage cannot hold TRACKING's 1 GiB reservation (its
 * max_file_store, by default 75 % of the volume's free space at start, is smaller) refuses the
 * stream with "insufficient storage resources available". The services that declare it stop with
 * exit 78 and one line naming the stream and the fix, as for any configuration error, instead of
 * exiting 1 with an unhandled NatsError stack (docs/operations.md, NATS streams and retention).
 */
const ROOT = join(import.meta.dirname, '..', '..')
const te = useTestEnv()

function run(name: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
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

  it.each(['gateway', 'email'])('%s: exits 78 naming the stream and the fix, no stack', async (name) => {
    const { code, output } = await run(name, { NATS_URL: nats.url })
    // NATS_PREFIX (the test's) comes first in the stream's name.
    expect(output).toMatch(/stream \w*TRACKING, which reserves its max_bytes \(1 GiB\)/)
    expect(output).toContain('insufficient storage resources available')
    expect(output).toContain('nats.persistence.size to 2Gi or more')
    expect(output).not.toMatch(/\n\s+at /)
    expect(code).toBe(78)
  })
})
