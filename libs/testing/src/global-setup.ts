import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string
    natsUrl: string
  }
}

/**
 * Finds PostgreSQL and NATS for the whole run. With a container runtime, starts both with
 * testcontainers; without one (this machine kind, CI), uses DATABASE_URL and NATS_URL, and
 * fails with a clear message when those are missing too.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const fromEnv = process.env.DATABASE_URL && process.env.NATS_URL
  if (!fromEnv || process.env.TESTCONTAINERS === 'true') {
    const started = await tryContainers()
    if (started) {
      project.provide('databaseUrl', started.databaseUrl)
      project.provide('natsUrl', started.natsUrl)
      return started.stop
    }
  }
  if (!fromEnv) {
    throw new Error(
      'Tests need PostgreSQL and NATS (JetStream): no container runtime was found, so set DATABASE_URL and NATS_URL ' +
        '(e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres NATS_URL=nats://127.0.0.1:4222).',
    )
  }
  project.provide('databaseUrl', process.env.DATABASE_URL!)
  project.provide('natsUrl', process.env.NATS_URL!)
  return async () => undefined
}

async function tryContainers(): Promise<{
  databaseUrl: string
  natsUrl: string
  stop: () => Promise<void>
} | null> {
  const tc = await import('testcontainers')
  try {
    await tc.getContainerRuntimeClient()
  } catch {
    return null
  }
  const pg = await new tc.GenericContainer('postgres:16-alpine')
    .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
    .withExposedPorts(5432)
    .withWaitStrategy(tc.Wait.forLogMessage(/database system is ready to accept connections/, 2))
    .start()
  const nats = await new tc.GenericContainer('nats:2.10-alpine')
    .withCommand(['-js'])
    .withExposedPorts(4222)
    .start()
  return {
    databaseUrl: `postgres://postgres@${pg.getHost()}:${pg.getMappedPort(5432)}/postgres`,
    natsUrl: `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`,
    stop: async () => {
      await Promise.allSettled([pg.stop(), nats.stop()])
    },
  }
}
