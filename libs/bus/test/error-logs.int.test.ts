import { Writable } from 'node:stream'
import { createDb, type Db } from '@mailer/db'
import { createLogger, ERR_LOG_MAX_BYTES } from '@mailer/observability'
import { useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/**
 * What a service's log line says when a query fails: Prisma errors from the real client and
 * database, logged through the logger every service gets (createLogger, made by startRuntime).
 * Their messages held a code frame of the generated client or the query's arguments, so one line
 * was 30-80 KB; it must stay bounded, name the code, and never hold DATABASE_URL's password.
 */
const te = useTestEnv()
// The local PostgreSQL trusts every login, so the password is only there to be looked for.
const PASSWORD = 'pw-never-logged'
const withPassword = (url: string) => {
  const u = new URL(url)
  u.password = PASSWORD
  return u.toString()
}
let db: Db

beforeAll(() => {
  db = createDb(withPassword(te.databaseUrl))
})
afterAll(() => db.$disconnect())

/** Logs `err` as the services do and returns the line. */
function logged(err: unknown): string {
  let line = ''
  const out = new Writable({
    write: (c, _e, cb) => {
      line += String(c)
      cb()
    },
  })
  createLogger({ service: 'error-logs-test' }, out).error({ err }, 'query failed')
  return line
}

const failure = (work: Promise<unknown>) =>
  work.then(
    () => expect.fail('the query succeeded'),
    (err: unknown) => err,
  )

/** The line is bounded, holds no password, and its `err` is what it returns. */
function check(line: string) {
  expect(Buffer.byteLength(line)).toBeLessThan(ERR_LOG_MAX_BYTES + 300)
  expect(line).not.toContain(PASSWORD)
  return JSON.parse(line).err
}

describe('a failed query in the log', () => {
  it('a missing table: code P2021, the model and what is missing, in a short line', async () => {
    const elsewhere = new URL(withPassword(te.databaseUrl))
    elsewhere.searchParams.set('schema', 'no_such_schema_error_logs')
    const other = createDb(elsewhere.toString())
    try {
      const err = check(logged(await failure(other.project.findMany({ where: { slug: 'x' } }))))
      expect(err.type).toBe('PrismaClientKnownRequestError')
      expect(err.code).toBe('P2021')
      expect(err.meta.modelName).toBe('Project')
      expect(err.message).toContain('The table `no_such_schema_error_logs.projects` does not exist')
    } finally {
      await other.$disconnect()
    }
  })

  it('a unique violation: code P2002 and the field', async () => {
    const data = { id: 'proj_error_logs', slug: 'error-logs', name: 'Error logs' }
    await db.project.create({ data })
    const err = check(
      logged(await failure(db.project.create({ data: { ...data, id: 'proj_error_logs_2' } }))),
    )
    expect(err.code).toBe('P2002')
    expect(err.message).toContain('Unique constraint failed')
    expect(JSON.stringify(err.meta)).toContain('slug')
  })

  it('a rejected argument: what was wrong, not the 50 KB the query carried', async () => {
    const err = check(
      logged(
        await failure(
          db.project.create({
            data: { id: 'p', slug: 's', name: 'n'.repeat(50_000), dailyLimit: 'many' as unknown as number },
          }),
        ),
      ),
    )
    expect(err.type).toBe('PrismaClientValidationError')
    expect(err.message).toMatch(/Argument `dailyLimit`: Invalid value provided\. Expected Int/)
  })

  it('an unreachable server: bounded, and the login stays out', async () => {
    const gone = new URL(withPassword(te.databaseUrl))
    gone.port = '1'
    const unreachable = createDb(gone.toString())
    try {
      const err = check(logged(await failure(unreachable.project.count())))
      expect(err.message).toMatch(/ECONNREFUSED|Can't reach database server/)
    } finally {
      await unreachable.$disconnect()
    }
  })
})
