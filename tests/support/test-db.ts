import { createDb, type Db } from '@mailer/db'
import { type TestEnv, useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll } from 'vitest'

/**
 * A test file's env and a Prisma client on its schema, opened before its tests and closed after
 * them, for the tests that drive a store of a service directly (no services started).
 */
export function useTestDb(): { te: TestEnv; readonly db: Db } {
  const te = useTestEnv()
  let db: Db | undefined
  beforeAll(() => {
    db = createDb(te.databaseUrl)
  })
  afterAll(async () => {
    await db?.$disconnect()
  })
  return {
    te,
    get db() {
      if (!db) throw new Error('useTestDb: the database is opened in beforeAll')
      return db
    },
  }
}
