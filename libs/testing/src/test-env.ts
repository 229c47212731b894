import { randomBytes } from 'node:crypto'
import { createMigratedSchema, dropSchema } from '@mailer/db/testing'
import { connect } from 'nats'
import { afterAll, beforeAll, inject } from 'vitest'

export interface TestEnv {
  /** DATABASE_URL pointing at this file's own schema (`?schema=`). */
  databaseUrl: string
  natsUrl: string
  /** NATS_PREFIX for this file: its own subjects, streams and consumers. */
  natsPrefix: string
  /** The environment a service started by this file should get. */
  env: Record<string, string>
}

/**
 * Gives the calling test file a fresh, migrated PostgreSQL schema and its own NATS
 * subject/stream prefix, and removes both afterwards, so files never see each other's data.
 * Call at the top level of a test file; read the result inside hooks and tests.
 */
export function useTestEnv(extra: Record<string, string> = {}): TestEnv {
  const id = randomBytes(5).toString('hex')
  const schema = `t_${id}`
  const natsPrefix = `t${id}`
  const baseUrl = inject('databaseUrl')
  const natsUrl = inject('natsUrl')
  const te: TestEnv = { databaseUrl: '', natsUrl, natsPrefix, env: {} }

  beforeAll(async () => {
    te.databaseUrl = await createMigratedSchema(baseUrl, schema)
    te.env = {
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      DATABASE_URL: te.databaseUrl,
      NATS_URL: natsUrl,
      NATS_PREFIX: natsPrefix,
      METRICS_PORT: '0',
      PORT: '0',
      // Bounded drains keep afterAll hooks short even when a test leaves work in flight.
      SHUTDOWN_TIMEOUT_SECONDS: '8',
      ...extra,
    }
  }, 60_000)

  afterAll(async () => {
    await dropSchema(baseUrl, schema).catch(() => undefined)
    await deleteStreams(natsUrl, natsPrefix).catch(() => undefined)
  }, 30_000)

  return te
}

async function deleteStreams(natsUrl: string, prefix: string): Promise<void> {
  const nc = await connect({ servers: natsUrl })
  try {
    const jsm = await nc.jetstreamManager()
    const names: string[] = []
    for await (const s of jsm.streams.list())
      if (s.config.name.startsWith(`${prefix.toUpperCase()}_`)) names.push(s.config.name)
    for (const n of names) await jsm.streams.delete(n)
  } finally {
    await nc.close()
  }
}
