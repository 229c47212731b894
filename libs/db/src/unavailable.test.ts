import { describe, expect, it } from 'vitest'
import { isDatabaseUnavailable } from './unavailable.js'

describe('isDatabaseUnavailable', () => {
  it('recognises an unreachable or restarting server, by Prisma code or driver message', () => {
    expect(isDatabaseUnavailable(Object.assign(new Error('x'), { code: 'P1001' }))).toBe(true)
    expect(
      isDatabaseUnavailable(
        new Error("Raw query failed. Code: `N/A`. Message: `Can't reach database server at 127.0.0.1:5432`"),
      ),
    ).toBe(true)
    expect(
      isDatabaseUnavailable(new Error('outer', { cause: new Error('connect ECONNREFUSED 127.0.0.1:5432') })),
    ).toBe(true)
    expect(isDatabaseUnavailable(new Error('FATAL: the database system is starting up'))).toBe(true)
    // DATABASE_QUERY_TIMEOUT_MS: node-postgres giving up on a silent server, PostgreSQL's cancel.
    expect(isDatabaseUnavailable(new Error('Query read timeout'))).toBe(true)
    expect(isDatabaseUnavailable(new Error('canceling statement due to statement timeout'))).toBe(true)
  })

  it('leaves other failures alone', () => {
    expect(
      isDatabaseUnavailable(Object.assign(new Error('Unique constraint failed'), { code: 'P2002' })),
    ).toBe(false)
    expect(isDatabaseUnavailable(new Error('syntax error at or near "SELEC"'))).toBe(false)
    expect(isDatabaseUnavailable(undefined)).toBe(false)
  })
})
