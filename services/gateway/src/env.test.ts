import { ConfigError } from '@mailer/config'
import { describe, expect, it } from 'vitest'
import { loadEnv } from './env.js'

const base = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres' }

describe('gateway env', () => {
  it('makes the dashboard cookies Secure by the request unless told always or never', () => {
    expect(loadEnv(base).DASHBOARD_COOKIE_SECURE).toBe('auto')
    for (const [given, taken] of [
      ['true', 'true'],
      ['YES', 'true'],
      ['1', 'true'],
      ['false', 'false'],
      ['no', 'false'],
      ['0', 'false'],
      ['Auto', 'auto'],
    ])
      expect(loadEnv({ ...base, DASHBOARD_COOKIE_SECURE: given }).DASHBOARD_COOKIE_SECURE, given).toBe(taken)
  })

  it('names DASHBOARD_COOKIE_SECURE when its value is none of those', () => {
    expect(() => loadEnv({ ...base, DASHBOARD_COOKIE_SECURE: 'sometimes' })).toThrow(ConfigError)
    expect(() => loadEnv({ ...base, DASHBOARD_COOKIE_SECURE: 'sometimes' })).toThrow(
      /DASHBOARD_COOKIE_SECURE/,
    )
  })
})
